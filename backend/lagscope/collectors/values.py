"""Tolerant conversions of server values: recorded fixtures and drivers disagree on types.

Tolerant of types, not of magnitudes: no MySQL/MariaDB integer is wider than an unsigned
BIGINT and no server value is infinite or NaN, so such a value raises (``OverflowError``,
``ValueError``) and the poller reports the answer as unexpected instead of storing it.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

# BIGINT's range, signed low end to unsigned high end.
_INT_LOW = -(2**63)
_INT_HIGH = 2**64 - 1


def as_int(value: Any) -> int | None:
    """An integer, or None for NULL / empty / non-numeric text."""
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return _in_range(value)
    if isinstance(value, float | Decimal):
        return _in_range(int(value))
    text = value.decode() if isinstance(value, bytes) else str(value)
    text = text.strip()
    try:
        number = int(text)
    except ValueError:
        return None
    return _in_range(number)


def _in_range(number: int) -> int:
    if not _INT_LOW <= number <= _INT_HIGH:
        raise OverflowError(f"{number} is wider than a 64-bit integer")
    return number


def as_float(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):
        return _finite(float(value))
    try:
        number = float(value.decode() if isinstance(value, bytes) else str(value))
    except ValueError:
        return None
    return _finite(number)


def _finite(number: float) -> float:
    if not math.isfinite(number):
        raise ValueError(f"{number} is not a finite number")
    return number


def as_text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def no_space(value: Any) -> str:
    """GTID text without the whitespace and newlines servers put after commas."""
    return "".join(as_text(value).split())
