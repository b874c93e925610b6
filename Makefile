# Lagscope — two commands do everything: `make demo` and `make test` (see README.md).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: test demo lint typecheck unit integration deps system-deps bench clean

# The product on one URL: a live MariaDB lab under load, polling, the API (demo mode).
demo: deps
	$(VENV)/bin/lagscope demo --port $${PORT:-8000}

# Everything a fresh Debian machine lacks, then every check and test.
test: deps lint typecheck
	$(PY) -m pytest tests

unit: deps
	$(PY) -m pytest tests/unit

integration: deps
	$(PY) -m pytest tests/integration

lint: deps
	$(VENV)/bin/ruff check backend tests bench
	$(VENV)/bin/ruff format --check backend tests bench

typecheck: deps
	$(VENV)/bin/mypy

deps: system-deps $(STAMP)

system-deps:
	@scripts/ensure-system-deps.sh

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[dev]'
	touch $(STAMP)

bench: deps
	$(PY) bench/lab_start.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
