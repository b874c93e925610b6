# Lagscope — two commands do everything: `make demo` and `make test` (see README.md).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Playwright drives Debian's Chromium (tests/e2e); its own browser download never works here.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

.PHONY: test check demo lint typecheck unit integration deps system-deps bench clean ui ui-check \
	vitest client oidc-provider

# The product on one URL: a live MariaDB lab under load, polling, the API (demo mode) serving
# the dashboard, and the tuning story (docs/demo.md). E.g. DEMO_ARGS="--scenario steady"
# or DEMO_ARGS="--phase-seconds 90,120,150 --load-tps 1500 --loop".
demo: deps ui
	$(VENV)/bin/lagscope demo --port $${PORT:-8000} $(DEMO_ARGS)

# Everything a fresh Debian machine lacks, then every check and test (slow-marked ones too):
# the full truth.
test: deps lint typecheck ui ui-check oidc-provider
	$(PY) -m pytest --durations=15 tests

# The inner loop: lint, types, the unit tests without the slow ones, the UI's checks (tsc,
# eslint, Vitest: ui-check). No lab, no browser, no UI build; `make test` before you push.
check: lint typecheck unit ui-check

# Unit tests without those marked `slow` (property tests, Alembic, real sockets and clocks:
# pyproject's markers); `$(PY) -m pytest -m slow tests/unit` runs just those.
unit: deps
	$(PY) -m pytest -m "not slow" tests/unit

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

# --- Web UI (frontend/) ----------------------------------------------------------------------
# Stamps: `npm ci` when package-lock.json changes, `npm run build` when a source changes.
UI := frontend
UI_DEPS := $(UI)/node_modules/.lagscope-stamp
UI_BUILD := $(UI)/dist/.lagscope-stamp
UI_SOURCES := $(shell find $(UI)/src $(UI)/public -type f 2>/dev/null) $(UI)/index.html \
	$(UI)/vite.config.ts $(UI)/tsconfig.json $(UI)/package.json

$(UI_DEPS): $(UI)/package-lock.json
	cd $(UI) && npm ci --no-audit --no-fund
	touch $@

$(UI_BUILD): $(UI_DEPS) $(UI_SOURCES)
	cd $(UI) && npm run build
	touch $@

ui: system-deps $(UI_BUILD)

ui-check: $(UI_DEPS)
	cd $(UI) && npm run typecheck && npm run lint && npx vitest run

vitest: $(UI_DEPS)
	cd $(UI) && npx vitest run

# The single sign-on tests' OpenID provider (oidc-provider from npm, run by Node): its
# packages, installed when its lock changes (tests/integration/oidc_provider.py does the same).
OIDC_PROVIDER_DEPS := tests/oidc_provider/node_modules/.lagscope-stamp
$(OIDC_PROVIDER_DEPS): tests/oidc_provider/package-lock.json
	cd tests/oidc_provider && npm ci --no-audit --no-fund
	touch $@

oidc-provider: system-deps $(OIDC_PROVIDER_DEPS)

# Regenerate the UI's API client from the API's OpenAPI document (after changing the API).
client: deps $(UI_DEPS)
	$(PY) scripts/dump_openapi.py
	cd $(UI) && npm run client

bench: deps
	$(PY) bench/lab_start.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis $(UI)/node_modules $(UI)/dist \
		tests/oidc_provider/node_modules
