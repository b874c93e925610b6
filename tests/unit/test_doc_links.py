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
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
