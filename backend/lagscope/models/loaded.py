"""Rows taken out of the session and written back by hand (a tick's own rows, the alert states
a judgement moved): their column values as loaded, and which of them changed since.

What is written is what the unit of work would have written: only the columns whose value
differs, compared with ``==``; a column never loaded is never written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_MISSING = object()


def loaded_values(row: object, columns: Iterable[str]) -> dict[str, Any]:
    """``row``'s values of ``columns`` as they are now (a column not loaded: marked missing)."""
    state = row.__dict__
    return {key: state.get(key, _MISSING) for key in columns}


def changes(row: object, before: dict[str, Any]) -> dict[str, Any]:
    """The columns of ``row`` that differ from ``before`` (its :func:`loaded_values`)."""
    now = row.__dict__
    return {
        key: value
        for key, old in before.items()
        if (value := now.get(key, _MISSING)) is not _MISSING and (old is _MISSING or value != old)
    }


def take_changes(row: object, before: dict[str, Any]) -> dict[str, Any]:
    """:func:`changes`, after which ``before`` holds the new values: the next call reports only
    what changed after this one."""
    changed = changes(row, before)
    before.update(changed)
    return changed


def assign(row: object, values: dict[str, Any]) -> None:
    """Set the columns of ``row`` whose value differs. An equal value set through the ORM's
    instrumentation costs its history bookkeeping (a few µs each, for some forty columns a
    poll that mostly do not change) and writes nothing, detached or not."""
    now = row.__dict__
    for key, value in values.items():
        if now.get(key, _MISSING) != value:
            setattr(row, key, value)
