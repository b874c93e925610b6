"""Reading an import file (YAML or JSON) and saying where in it something is wrong.

``load`` returns the data and, for every mapping key and list item, the line it starts on, so
a validation error at ``clusters[2].instances[0].port`` can say "line 14". A syntax error
names its line and column. Duplicate keys are refused (YAML and JSON parsers keep the last
one silently, which would import something the file's reader did not see).

JSON is read by :mod:`json`; YAML by PyYAML's safe loader (no tags that build objects), which
also maps JSON's lines, JSON being YAML too. An import file is short and written by hand, so
YAML's anchors and aliases (``&a`` / ``*a``, merge keys ``<<: *a``) are refused at the first
one, before anything is expanded: nine nested aliases in 318 bytes grow into a billion nodes
(13 s and 2.3 GB before failing, without this). The file is read up to ``MAX_BYTES`` and its
nesting is bounded too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lagscope.errors import InvalidInput

Loc = tuple[str | int, ...]
# An import file describes servers, not data: anything this large is a mistake (1,000
# clusters of a few instances each fit in well under a megabyte).
MAX_BYTES = 4 * 1024 * 1024
# Clusters > instances > heartbeat > a field: anything deeper than this is not an import file.
MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Document:
    name: str
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)

    def where(self, loc: Sequence[str | int]) -> str:
        """``clusters[2].instances[0].port (line 14)``: the path, and the line of the nearest
        part of it found in the file (a missing field is reported at its parent)."""
        path = dotted(loc)
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return f"{path or 'the file'} (line {line})"
        return path or "the file"


def dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load(path: Path) -> Document:
    """The file's data and line map; :class:`InvalidInput` saying where it cannot be read."""
    try:
        # Read up to the cap, never by the size the file claims (a FIFO or /dev/zero has none).
        with path.open("rb") as file:
            raw = file.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise InvalidInput(f"{path}: larger than {MAX_BYTES} bytes")
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read it: {exc}") from exc
    return parse(text, str(path), json_syntax=path.suffix.lower() == ".json")


def parse(text: str, name: str, json_syntax: bool) -> Document:
    if json_syntax:
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{name}: line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
        except _Duplicate as exc:
            raise InvalidInput(f"{name}: duplicate key {exc.args[0]!r}") from exc
        try:
            lines = _lines(_compose(text), name)
        except yaml.YAMLError:
            lines = {}  # valid JSON that YAML 1.1 reads differently: paths without lines
        return Document(name, data, lines)
    try:
        loader = _PlainLoader(text)
        try:
            node = loader.get_single_node()
            lines = _lines(node, name)
            data = None if node is None else loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        raise InvalidInput(f"{name}: {at}{exc.problem or exc.context}") from exc
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{name}: not YAML: {exc}") from exc
    return Document(name, data, lines)


class _PlainLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML is untyped
    """The safe loader, refusing anchors and aliases when it meets them (before a node is
    shared, let alone expanded) and nesting deeper than ``MAX_DEPTH``."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise _refusal("an alias (*name)", self.peek_event())
        event = self.peek_event()
        if getattr(event, "anchor", None) is not None:
            raise _refusal("an anchor (&name)", event)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _refusal(what: str, event: Any) -> yaml.composer.ComposerError:
    return yaml.composer.ComposerError(
        None,
        None,
        f"{what}: anchors, aliases and merge keys are not accepted in an import file "
        "(write each value out)",
        event.start_mark,
    )


def _compose(text: str) -> Any:
    loader = _PlainLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    for key in keys:
        if keys.count(key) > 1:
            raise _Duplicate(key)
    return dict(pairs)


def _lines(node: Any, name: str) -> dict[Loc, int]:
    lines: dict[Loc, int] = {}

    def walk(n: Any, loc: Loc) -> None:
        lines[loc] = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in n.value:
                text = str(key.value)
                if text in seen:
                    raise InvalidInput(
                        f"{name}: line {key.start_mark.line + 1}: duplicate key {text!r} "
                        f"(first on line {seen[text]})"
                    )
                seen[text] = key.start_mark.line + 1
                walk(value, (*loc, text))
                lines[(*loc, text)] = key.start_mark.line + 1
        elif isinstance(n, yaml.SequenceNode):
            for i, item in enumerate(n.value):
                walk(item, (*loc, i))

    if node is not None:
        walk(node, ())
    return lines
