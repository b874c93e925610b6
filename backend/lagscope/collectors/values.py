"""Tolerant conversions of server values: recorded fixtures and drivers disagree on types."""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def as_int(value: Any) -> int | None:
    """An integer, or None for NULL / empty / non-numeric text."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        return int(value)
    text = value.decode() if isinstance(value, bytes) else str(value)
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return None


def as_float(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return float(value)
    try:
        return float(value.decode() if isinstance(value, bytes) else str(value))
    except ValueError:
        return None


def as_text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def no_space(value: Any) -> str:
    """GTID text without the whitespace and newlines servers put after commas."""
    return "".join(as_text(value).split())
