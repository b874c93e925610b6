"""Column types that keep the time series compact and portable.

Samples are written once a second per channel for days, so bytes per row matter (target ≤ 60
bytes per raw sample on SQLite): time is an integer of epoch microseconds and fractional
metrics are stored as scaled integers (milliseconds, milli-transactions per second), which every
backend stores in a few bytes where a float takes eight. Python code only ever sees aware UTC
datetimes and floats.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, Integer
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class EpochMicros(TypeDecorator[datetime]):
    """Aware UTC datetime ↔ BIGINT microseconds since the epoch."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> int | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: Lagscope stores aware UTC times only")
        return to_micros(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else from_micros(int(value))


class Scaled(TypeDecorator[float]):
    """A float stored as ``round(value × scale)`` in an integer column."""

    impl: Any = Integer
    cache_ok = True

    def __init__(self, scale: int = 1000, big: bool = False) -> None:
        super().__init__()
        self.scale = scale
        if big:
            self.impl = BigInteger()

    def process_bind_param(self, value: float | None, dialect: Dialect) -> int | None:
        return None if value is None else round(value * self.scale)

    def process_result_value(self, value: Any, dialect: Dialect) -> float | None:
        return None if value is None else int(value) / self.scale


def to_micros(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    return datetime.fromtimestamp(micros // 1_000_000, UTC).replace(microsecond=micros % 1_000_000)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
