"""The two test lanes in the Makefile: ``make check`` is the inner loop (lint,
types, unit tests without the ``slow`` mark, Vitest: no lab, no browser, no UI build) and
``make test`` stays the full truth (every test, slow ones included). Read from the Makefile as
make reads it: a target's prerequisites after the colon, its recipe on the tab-led lines below.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def rules() -> dict[str, tuple[list[str], list[str]]]:
    """target -> (prerequisites, recipe lines), for the plain ``name: ...`` rules."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    current: list[str] | None = None
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        head = re.match(r"^([A-Za-z][\w-]*):(?!=)\s*(.*)$", line)
        if head:
            current = []
            found[head.group(1)] = (head.group(2).split(), current)
        elif line.startswith("\t") and current is not None:
            current.append(line.strip())
        elif line.strip() and not line.startswith("#"):
            current = None
    return found


def pytest_args(recipe: list[str]) -> list[str]:
    (line,) = [r for r in recipe if "-m pytest" in r]
    return shlex.split(line)[3:]  # after `$(PY) -m pytest`


def test_check_is_lint_types_fast_unit_and_the_uis_tsc_eslint_and_vitest() -> None:
    made = rules()
    assert made["check"] == (["lint", "typecheck", "unit", "ui-check"], [])
    assert made["ui-check"][1] == [
        "cd $(UI) && npm run typecheck && npm run lint && npx vitest run"
    ]


def test_unit_deselects_the_slow_mark_and_test_runs_everything() -> None:
    made = rules()
    assert pytest_args(made["unit"][1]) == ["-m", "not slow", "tests/unit"]
    everything = pytest_args(made["test"][1])
    assert everything[-1] == "tests" and "-m" not in everything and "-k" not in everything
    assert {"lint", "typecheck", "ui-check"} <= set(made["test"][0])


def test_the_slow_mark_is_registered_for_strict_markers() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_config = config["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in pytest_config["addopts"]
    assert any(m.startswith("slow:") for m in pytest_config["markers"])
