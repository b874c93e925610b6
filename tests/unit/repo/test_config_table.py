"""docs/configuration.md's table lists exactly the ``LAGSCOPE_*`` variables the code reads.

Read by the code means: a field of :class:`lagscope.config.Settings` (pydantic-settings reads it as
``LAGSCOPE_<FIELD>``); a string literal that is a whole ``LAGSCOPE_*`` name in the Python of
``backend/``, ``migrations/``, ``bench/``, ``scripts/`` and the tests' fixtures (``os.environ``,
click's ``envvar=``, the environment handed to child processes); an
f-string that builds one (``f"LAGSCOPE_SCENARIO_{account}_PASSWORD"``: any table name it matches
counts); and any ``LAGSCOPE_*`` in the deployment files (Makefile, Dockerfile, docker-compose.yml,
deploy/, the UI's vite config). Names inside docstrings and messages are prose, not reads: a
docstring naming a variable that nothing reads is no reason to document it.

The reference is the one table in docs/configuration.md (its first column): no other page of the
documentation tables settings, so there is one wording per setting. For a field of ``Settings``
the table's default is checked against the code's too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lagscope.config import Settings

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "docs" / "configuration.md"
NAME = re.compile(r"LAGSCOPE_[A-Z0-9_]*[A-Z0-9]")
PYTHON_DIRS = ("backend", "migrations", "bench", "scripts")
TEXT_FILES = ("Makefile", "Dockerfile", "docker-compose.yml", "frontend/vite.config.ts")
TEXT_DIRS = ("deploy",)


def _python_files() -> list[Path]:
    files = [p for d in PYTHON_DIRS for p in (ROOT / d).rglob("*.py")]
    return files + sorted((ROOT / "tests").rglob("conftest.py"))


def names_in_python(source: str) -> tuple[set[str], set[str]]:
    """Whole-name string literals, and f-strings that build a name (as regular expressions)."""
    names: set[str] = set()
    patterns: set[str] = set()
    tree = ast.parse(source)
    inside_fstring = {
        id(part)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for part in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces = [
                re.escape(v.value) if isinstance(v, ast.Constant) else r"[A-Z0-9_]+"
                for v in node.values
            ]
            pattern = "".join(pieces)
            if pattern.startswith("LAGSCOPE_") and re.fullmatch(r"[A-Z0-9_\[\]+\\-]+", pattern):
                patterns.add(pattern)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in inside_fstring
            and NAME.fullmatch(node.value)
        ):
            names.add(node.value)
    return names, patterns


def names_read_by_code() -> tuple[set[str], set[str]]:
    names = {f"LAGSCOPE_{field.upper()}" for field in Settings.model_fields}
    patterns: set[str] = set()
    for path in _python_files():
        found, built = names_in_python(path.read_text())
        names |= found
        patterns |= built
    texts = [ROOT / f for f in TEXT_FILES]
    texts += [p for d in TEXT_DIRS for p in (ROOT / d).rglob("*") if p.is_file()]
    for path in texts:
        names |= set(NAME.findall(path.read_text()))
    return names, patterns


def names_in_table(text: str) -> set[str]:
    """The first column of the configuration table (its group rows name no setting)."""
    rows = [line for line in text.splitlines() if line.startswith("| `LAGSCOPE_")]
    return {NAME.search(row.split("|")[1]).group(0) for row in rows}  # type: ignore[union-attr]


def missing_and_stale(table: str) -> tuple[set[str], set[str]]:
    code, patterns = names_read_by_code()
    listed = names_in_table(table)
    built = {n for n in listed if any(re.fullmatch(p, n) for p in patterns)}
    return code - listed, listed - code - built


def test_every_setting_the_code_reads_is_in_the_table() -> None:
    missing, _ = missing_and_stale(TABLE.read_text())
    assert not missing, f"read by the code but not in docs/configuration.md: {sorted(missing)}"


def test_the_table_lists_no_setting_the_code_does_not_read() -> None:
    _, stale = missing_and_stale(TABLE.read_text())
    assert not stale, f"in docs/configuration.md but read by nothing: {sorted(stale)}"


def test_a_removed_row_or_an_invented_one_is_caught() -> None:
    table = TABLE.read_text()
    lines = table.splitlines()
    row = next(line for line in lines if line.startswith("| `LAGSCOPE_PARAMS_EVERY_S`"))
    assert "LAGSCOPE_PARAMS_EVERY_S" in missing_and_stale(table.replace(row + "\n", ""))[0]
    invented = table.replace(row, row + "\n| `LAGSCOPE_NOT_READ` | 1 | nothing | api |")
    assert missing_and_stale(invented)[1] == {"LAGSCOPE_NOT_READ"}


def test_no_other_page_tables_a_setting() -> None:
    """One wording per setting: README.md and the other docs name settings, never table them."""
    pages = [ROOT / "README.md", ROOT / "bench" / "README.md"]
    pages += [p for p in (ROOT / "docs").glob("*.md") if p != TABLE]
    tabled = {
        f"{page.relative_to(ROOT)}: {line[:60]}"
        for page in pages
        for line in page.read_text().splitlines()
        if line.startswith("| `LAGSCOPE_")
    }
    assert not tabled, f"settings tabled outside docs/configuration.md: {sorted(tabled)}"


def test_the_extraction_sees_literals_and_built_names_but_not_prose() -> None:
    source = '''
"""Docstring naming LAGSCOPE_IN_PROSE."""
import os
a = os.environ.get("LAGSCOPE_LITERAL")
b = os.environ.get(f"LAGSCOPE_BUILT_{kind}_PASSWORD")
c = "see LAGSCOPE_IN_A_MESSAGE"
'''
    names, patterns = names_in_python(source)
    assert names == {"LAGSCOPE_LITERAL"}
    (pattern,) = patterns
    assert re.fullmatch(pattern, "LAGSCOPE_BUILT_ADMIN_PASSWORD")


def documented_defaults(table: str) -> dict[str, str]:
    """The default column of each row, by name."""
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| `LAGSCOPE_")]
    return {NAME.search(r[1]).group(0): r[2].strip() for r in rows}  # type: ignore[union-attr]


def wrong_defaults(table: str) -> list[str]:
    """Settings fields whose documented default is not the code's (None defaults: free words)."""
    documented = documented_defaults(table)
    wrong = []
    for field, info in Settings.model_fields.items():
        name, default = f"LAGSCOPE_{field.upper()}", info.default
        text = documented.get(name)
        if text is None or default is None:
            continue
        literal = re.search(r"`([^`]*)`", text)
        if default == "":
            ok = text.startswith("empty")
        elif literal is None:
            ok = False
        elif isinstance(default, bool):
            ok = literal.group(1) == ("1" if default else "0")
        elif isinstance(default, int | float):
            ok = re.fullmatch(r"[0-9.]+", literal.group(1)) is not None and float(
                literal.group(1)
            ) == float(default)
        else:
            ok = literal.group(1) == default
        if not ok:
            wrong.append(f"{name}: the table says {text!r}, the code {default!r}")
    return wrong


def test_the_table_gives_the_codes_defaults() -> None:
    wrong = wrong_defaults(TABLE.read_text())
    assert not wrong, "\n".join(wrong)


def test_a_wrong_default_is_caught() -> None:
    table = TABLE.read_text()
    row = next(
        line for line in table.splitlines() if line.startswith("| `LAGSCOPE_PARAMS_EVERY_S`")
    )
    changed = table.replace(row, row.replace("`5`", "`10`", 1))
    assert wrong_defaults(changed) == [
        "LAGSCOPE_PARAMS_EVERY_S: the table says '`10` (the demo: `2`)', the code 5.0"
    ]
