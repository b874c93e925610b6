"""docs/architecture.md's module tree names every backend package and module, so the map a new
reader starts from stays true as modules move: a module added, split or renamed without its
line in the tree fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "backend" / "lagscope"
PAGE = ROOT / "docs" / "architecture.md"
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tree() -> list[str]:
    text = PAGE.read_text()
    after = text[text.index("## The module tree") :]
    start = after.index("```\n") + 4
    return after[start : after.index("```", start)].splitlines()


def blocks() -> dict[str, str]:
    """The tree's text under each top-level entry of backend/lagscope/ (its nested lines too)."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in tree():
        if not line.startswith("  ") or not line.strip():
            current = ""
            continue
        head = line[2:]
        if not head.startswith(" "):
            first = head.split()[0]
            current = first.rstrip("/").removesuffix(".py")
            found.setdefault(current, [])
            for extra in WORD.findall(line):  # a line listing several top-level modules
                found.setdefault(extra, [])
        if current:
            found[current].append(line)
    return {name: "\n".join(lines) for name, lines in found.items()}


def modules() -> dict[str, list[str]]:
    """Each package (path from lagscope/, "" for the top) and its module names."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts or path.stem in ("__init__", "__main__"):
            continue
        package = path.parent.relative_to(PACKAGE).as_posix()
        found.setdefault("" if package == "." else package, []).append(path.stem)
    return found


def test_every_backend_package_and_module_is_on_the_map() -> None:
    described = blocks()
    missing = []
    for package, names in modules().items():
        if package == "":
            missing += [f"{n}.py" for n in names if n not in described]
            continue
        top, *nested = package.split("/")
        text = described.get(top)
        if text is None:
            missing.append(f"{top}/")
            continue
        words = set(WORD.findall(text))
        if nested and f"{nested[-1]}/" not in text:
            missing.append(f"{package}/")
        missing += [f"{package}/{n}" for n in names if n not in words]
    assert not missing, f"docs/architecture.md's module tree does not name: {missing}"


def test_the_map_names_nothing_that_is_gone() -> None:
    packages = {p.split("/")[0] for p in modules() if p}
    tops = {n for n in modules()[""]} | packages
    listed = {
        line[2:].split()[0].rstrip("/").removesuffix(".py")
        for line in tree()
        if line.startswith("  ") and line[2:3] != " " and line.strip()
    }
    gone = sorted(listed - tops)
    assert not gone, f"docs/architecture.md's module tree names what is not there: {gone}"
