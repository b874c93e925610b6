"""Every link in the documentation points into the repository, at a file (and heading) that exists.

The pages: ``README.md``, ``docs/*.md`` and ``bench/README.md``. Checked are Markdown links and
images (``[text](target)``), reference definitions (``[name]: target``) and autolinks
(``<https://…>``) outside code. The rule: **no link leaves the repository** — a target with a
scheme (``https:``, ``mailto:`` …) or starting with ``//`` fails, and so does a bare
``http(s)://`` in prose, which GitHub would turn into a link. Addresses inside code (fenced
blocks and inline code spans: ``http://127.0.0.1:8000/``, a scrape config's target, an example
webhook body) are examples of what to type, not links, and are not checked.

A relative target must name an existing file or folder inside the repository; a ``#fragment``
on a Markdown page must be the GitHub anchor of one of its headings (lower case, punctuation
dropped, spaces to hyphens, ``-1``, ``-2`` … for repeats).

The code stands alone too: its comments, docstrings and Python function names (under
``backend/``, ``tests/``, ``bench/``, ``scripts/``, ``frontend/src/`` and ``deploy/``) may point
into ``docs/`` — the page must exist, and an anchor, or a heading quoted after the page, must be
one of its headings — but never at design notes kept outside the repository nor at a bare
ticket number: a comment says why, not which ticket asked.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README_MAX_LINES = 200

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*)>")
BARE_URL = re.compile(r"\bhttps?://[^\s)>\]]+")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def prose(markdown: str) -> str:
    """The text outside fenced code blocks and inline code spans (both blanked to spaces)."""
    text = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), markdown)
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings of a page (headings inside code are not headings)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    text = FENCE.sub("", markdown)
    for match in HEADING.finditer(text):
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", match.group(2))  # a link's text
        slug = re.sub(r"[^\w\- ]", "", title.lower().replace("`", "")).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def targets(markdown: str) -> list[str]:
    text = prose(markdown)
    found = [m.group(1) for m in LINK.finditer(text)]
    found += [m.group(1) for m in REFERENCE.finditer(text)]
    found += [m.group(1) for m in AUTOLINK.finditer(text)]
    return found


def problems(page: Path, markdown: str) -> list[str]:
    """What is wrong with the links of one page, in words (empty: nothing)."""
    where = page.relative_to(ROOT)
    out: list[str] = []
    for url in BARE_URL.findall(prose(markdown)):
        if not any(url in t for t in targets(markdown)):
            out.append(f"{where}: {url} leaves the repository (a bare address in prose)")
    for target in targets(markdown):
        if SCHEME.match(target) or target.startswith("//"):
            out.append(f"{where}: {target} leaves the repository")
            continue
        path_part, _, fragment = target.partition("#")
        file = (page.parent / path_part).resolve() if path_part else page
        if ROOT not in file.parents and file != ROOT:
            out.append(f"{where}: {target} points outside the repository")
        elif not file.exists():
            out.append(f"{where}: {target} names no file")
        elif (
            fragment
            and file.suffix == ".md"
            and fragment not in anchors(file.read_text() if path_part else markdown)
        ):
            out.append(f"{where}: {target} names no heading of {file.relative_to(ROOT)}")
    return out


def test_every_link_stays_in_the_repository_and_finds_its_target() -> None:
    found = [p for page in pages() for p in problems(page, page.read_text())]
    assert not found, "\n".join(found)


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the rest belongs in docs/"


def test_the_check_catches_what_it_should(tmp_path: Path) -> None:
    page = ROOT / "docs" / "demo.md"
    text = "\n".join(
        [
            "# A title",
            "## `lagscope probe`: one snapshot, as JSON",
            "[ok](#a-title) [ok too](#lagscope-probe-one-snapshot-as-json) [up](../README.md)",
            "[gone](nowhere.md) [bad anchor](#no-such-heading) [away](https://example.org/)",
            "[escape](../../outside.md) <https://example.org/auto> see http://example.org/bare",
            "`http://127.0.0.1:8000/` in code is an example, not a link",
            "```",
            "# a shell comment, not a heading: [x](missing-in-code.md) https://in.code/",
            "```",
        ]
    )
    found = problems(page, text)
    assert [f.split(": ", 1)[1] for f in found] == [
        "http://example.org/bare leaves the repository (a bare address in prose)",
        "nowhere.md names no file",
        "#no-such-heading names no heading of docs/demo.md",
        "https://example.org/ leaves the repository",
        "../../outside.md points outside the repository",
        "https://example.org/auto leaves the repository",
    ]
    assert "a-shell-comment-not-a-heading-xmissing-in-codemd-httpsincode" not in anchors(text)


# --- the code's own pointers ------------------------------------------------------------------
#
# Comments and docstrings under the code roots (and Python's function and class names) may point
# into docs/: a page, a page's heading as an anchor, or the start of a heading quoted after the
# page (docs/lag.md, "The figures"). They must stand alone: no design note kept outside the
# repository, and no bare ticket number (a comment says why, not which ticket asked).

CODE_ROOTS = ("backend", "tests", "bench", "scripts", "frontend/src", "deploy")
SKIPPED_DIRS = {"node_modules", "__pycache__", "dist", "artifacts", ".mypy_cache"}
SLASH_COMMENTED = {".ts", ".tsx", ".js", ".mjs", ".css"}
# Read whole: Markdown beside the code, recorded fixtures (their sources), top-level files.
WHOLE = {".md", ".json"}
PROSE_FILES = ("Makefile", "Dockerfile", "docker-compose.yml")

# A docs/ page, then optionally #anchor, or a title in double quotes after a comma, a colon or
# an opening parenthesis. Not a URL's path (…/docs/…).
DOC_POINTER = re.compile(
    r"(?<![\w/.-])docs/(?P<file>[\w.-]+\.\w+)"
    r"(?:#(?P<anchor>[\w-]+)|(?:[,:]\s*|\s*\(\s*)[\"“](?P<title>[^\"”\n]+)[\"”])?"
)
FORBIDDEN = (
    (
        re.compile(r"\b(?:DESIGN|REPLICATION|CAUSES|UI|STYLE)\.md\b"),
        "a design note outside the repo",
    ),
    (re.compile(r"\bDESIGN\s*§"), "a design note outside the repo"),
    (re.compile(r"\bCONTRACT\s*(?:\(|\d)"), "a contract note outside the repo"),
    (re.compile(r"(?:\.\./|/work/)shared\b"), "a path outside the repo"),
    (re.compile(r"(?i)(?<![a-z])issues?[\s_]*#?\s*\d+"), "a bare ticket number (say the reason)"),
)
# // or /* … */ comments (`//` right after a colon is a URL, not a comment); shell's #; SQL's --.
SLASH_COMMENT = re.compile(r"(?<![:\w])//[^\n]*|/\*.*?\*/", re.S)
HASH_COMMENT = re.compile(r"(?m)(?:^|\s)#[^\n]*")
SQL_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
COMMENTS = {".sh": HASH_COMMENT, ".sql": SQL_COMMENT} | dict.fromkeys(
    SLASH_COMMENTED, SLASH_COMMENT
)


def python_notes(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment, docstring, function and class name of a Python module."""
    notes: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            notes.append((token.start[0], token.string))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            notes.append((node.lineno, node.name))  # a test's name says what it tests, too
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                notes.append((node.body[0].lineno, docstring))
    return sorted(notes)


def notes_of(path: Path, text: str) -> list[tuple[int, str]]:
    """What of a file is prose about the code: its comments and docstrings, or all of it."""
    if path.suffix == ".py":
        return python_notes(text)
    comment = COMMENTS.get(path.suffix)
    if comment is None:
        return [(1, text)]
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in comment.finditer(text)]


def code_files() -> list[Path]:
    found: list[Path] = []
    for root in CODE_ROOTS:
        for folder, dirs, files in os.walk(ROOT / root):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and "egg-info" not in d)
            for name in sorted(files):
                path = Path(folder) / name
                if path.suffix == ".py" or path.suffix in WHOLE or path.suffix in COMMENTS:
                    found.append(path)
    return found


@functools.cache
def _page_anchors(page: Path) -> frozenset[str]:
    return frozenset(anchors(page.read_text()))


@functools.cache
def _heading_titles(page: Path) -> tuple[str, ...]:
    text = FENCE.sub("", page.read_text())
    return tuple(m.group(2).replace("`", "").lower() for m in HEADING.finditer(text))


def note_problems(where: str, line: int, text: str) -> list[str]:
    """What is wrong with one comment or docstring's pointers, in words (empty: nothing)."""
    out: list[tuple[int, str]] = []
    flat = re.sub(r"\s*\n\s*(?:#|//|\*|--)?\s*", " ", text)  # a pointer may wrap a line
    for pattern, what in FORBIDDEN:
        out += [(m.start(), f"{m.group(0)!r} is {what}") for m in pattern.finditer(flat)]
    for match in DOC_POINTER.finditer(flat):
        page, name = ROOT / "docs" / match["file"], f"docs/{match['file']}"
        if not page.is_file():
            out.append((match.start(), f"{name} names no file"))
        elif match["anchor"] and match["anchor"] not in _page_anchors(page):
            out.append((match.start(), f"{name}#{match['anchor']} names no heading"))
        elif match["title"] and page.suffix == ".md":
            title = match["title"].replace("`", "").lower()
            if not any(h.startswith(title) for h in _heading_titles(page)):
                out.append((match.start(), f"{name} has no heading {match['title']!r}"))
    return [f"{where}:{line}: {what}" for _, what in sorted(out)]


def file_problems(path: Path, text: str) -> list[str]:
    if not any(pattern.search(text) for pattern in (DOC_POINTER, *(p for p, _ in FORBIDDEN))):
        return []  # most files: nothing to parse for
    where = str(path.relative_to(ROOT)) if ROOT in path.parents else path.name
    return [p for line, note in notes_of(path, text) for p in note_problems(where, line, note)]


def test_code_comments_point_only_into_the_repository() -> None:
    found = [p for path in code_files() for p in file_problems(path, path.read_text())]
    for name in PROSE_FILES:
        found += note_problems(name, 1, (ROOT / name).read_text())
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        found += note_problems(str(page.relative_to(ROOT)), 1, page.read_text())
    assert not found, "\n".join(found)


def test_markdown_beside_the_code_links_find_their_targets() -> None:
    """Markdown beside the code (bench/, tests/fixtures/) may cite sources on the web; its
    relative links must find their file and heading as the guides' do."""
    beside = [p for p in code_files() if p.suffix == ".md"]
    found = [p for page in beside for p in problems(page, page.read_text())]
    found = [p for p in found if "leaves the repository" not in p]
    assert not found, "\n".join(found)


def test_the_code_check_catches_what_it_should() -> None:
    # The bad references are built from pieces, so that this file's own text stays clean.
    design, shared, contract = "DESIGN" + ".md", "../" + "shared", "CONTRACT" + "(19)"
    source = "\n".join(
        [
            f'"""A module (docs/lag.md, "The figures"; {design}, DESIGN' + ' §4)."""',
            "# fine: docs/lag.md#errant-transactions, docs/causes.md, docs/explorer.png",
            "# gone: docs/nowhere.md, docs/lag.md#no-such-heading",
            '# and docs/lag.md, "No such title"; a title may wrap: docs/lag.md, "The',
            '# figures", docs/causes.md ("Lag episodes")',
            f"# away: {shared}/notes.md, {contract}, see issue" + " 17 item 3",
            "def test_the_issue" + "_19_case():",
            '    """Issue' + ' #12: a docstring."""',
            "    return 'issue" + " 5 in a string is code, not a note'",
            "# a URL's path is not a pointer: https://prometheus.io/docs/alerting/latest/",
        ]
    )
    found = [f.split(": ", 1)[1] for f in file_problems(Path("planted.py"), source)]
    assert found == [
        "'DESIGN.md' is a design note outside the repo",
        "'DESIGN §' is a design note outside the repo",
        "docs/nowhere.md names no file",
        "docs/lag.md#no-such-heading names no heading",
        "docs/lag.md has no heading 'No such title'",
        "'../shared' is a path outside the repo",
        "'CONTRACT(' is a contract note outside the repo",
        "'issue 17' is a bare ticket number (say the reason)",
        "'issue_19' is a bare ticket number (say the reason)",
        "'Issue #12' is a bare ticket number (say the reason)",
    ], found
    ts = "// see issue" + " 8\nconst u = 'http://x/docs/a.md'; /* docs/lag.md, \"The figures\" */\n"
    assert [f.split(": ", 1)[1] for f in file_problems(Path("planted.ts"), ts)] == [
        "'issue 8' is a bare ticket number (say the reason)"
    ]
