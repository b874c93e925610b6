"""How big the backend's modules and functions have grown: modules kept small enough to read.

Counts the lines of every module under ``backend/lagscope`` and, read with ``ast``, the span of
every function (its node's ``lineno`` to ``end_lineno``, decorators left out), and lists those
over the limits (modules over 300 and 500 lines, functions
over 60). With ``--max-300``, ``--max-500`` or ``--max-fn60`` it exits
non-zero when there are more than that many, so a test can hold the line once it is reached.

Usage: ``python scripts/size_report.py [--max-300 N] [--max-500 N] [--max-fn60 N]``
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "backend" / "lagscope"


def module_lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def function_spans(path: Path) -> list[tuple[str, int, int]]:
    """Every function and method in the module, as (qualified name, first line, line count)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    spans: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                spans.append((name, child.lineno, end - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-300", type=int, help="most modules allowed over 300 lines")
    parser.add_argument("--max-500", type=int, help="most modules allowed over 500 lines")
    parser.add_argument("--max-fn60", type=int, help="most functions allowed over 60 lines")
    args = parser.parse_args(argv)

    modules = sorted(PACKAGE.rglob("*.py"))
    sizes = [(path.relative_to(ROOT).as_posix(), module_lines(path)) for path in modules]
    over_300 = sorted(((n, p) for p, n in sizes if n > 300), reverse=True)
    over_500 = [(n, p) for n, p in over_300 if n > 500]

    functions: list[tuple[int, str]] = []
    for path in modules:
        rel = path.relative_to(ROOT).as_posix()
        for name, line, count in function_spans(path):
            functions.append((count, f"{rel}:{line} {name}"))
    fn_40 = sorted((f for f in functions if f[0] > 40), reverse=True)
    fn_60 = [f for f in fn_40 if f[0] > 60]

    print(f"modules over 300 lines: {len(over_300)} (over 500: {len(over_500)})")
    for count, rel in over_300:
        print(f"  {count:5d}  {rel}{'  [>500]' if count > 500 else ''}")
    print(f"functions over 40 lines: {len(fn_40)} (over 60: {len(fn_60)})")
    for count, where in fn_40:
        print(f"  {count:5d}  {where}{'  [>60]' if count > 60 else ''}")

    failures = []
    for flag, limit, actual in (
        ("--max-300", args.max_300, len(over_300)),
        ("--max-500", args.max_500, len(over_500)),
        ("--max-fn60", args.max_fn60, len(fn_60)),
    ):
        if limit is not None and actual > limit:
            failures.append(f"{flag} {limit}: {actual}")
    if failures:
        print("over the limits: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
