"""The samples the journal and the comparisons judge: a channel's polls inside the windows they
need, read in as few queries as the store allows, from the ``samples`` table or a raw-series
store past one box, as the same rows either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import BigInteger, and_, or_, select, type_coerce
from sqlalchemy.orm import Session

from lagscope.history.series import RawSeries
from lagscope.models import Sample
from lagscope.models.types import Scaled, to_micros

_SPANS_PER_QUERY = 50  # SQLite parses an OR chain as a tree ~1000 deep at most


@dataclass(frozen=True, slots=True)
class SampleRow:
    """The columns of a sample the journal and the comparison read; ``us`` = ts in epoch µs."""

    us: int
    lag_s: float | None
    verdict: int
    apply_rate: float | None
    source_rate: float | None
    not_received: int | None
    received_not_applied: int | None


def merge_spans(spans: Sequence[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[tuple[datetime, datetime]] = []
    for lo, hi in sorted(s for s in spans if s[0] < s[1]):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def load_samples(
    session: Session,
    channel_id: int,
    spans: Sequence[tuple[datetime, datetime]],
    raw: RawSeries | None = None,
) -> list[SampleRow]:
    """A channel's samples inside the half-open ``spans``, in time order: only the windows a
    caller needs, in as few queries as the OR-chain limit allows (one for a typical journal).
    ``raw``: the raw-series store they are read from instead of the ``samples`` table."""
    merged = merge_spans(spans)
    if raw is not None:
        bounds = [(to_micros(lo), to_micros(hi)) for lo, hi in merged]
        found = raw.rows(channel_id, _ROW_COLUMNS, bounds)
        return [row for us, values in found if (row := _sample_row(us, values)) is not None]
    rows: list[SampleRow] = []
    for i in range(0, len(merged), _SPANS_PER_QUERY):
        chunk = merged[i : i + _SPANS_PER_QUERY]
        # Core, and ts as its stored integer: a day of 1 Hz samples is ~86k rows per channel,
        # and ORM row handling plus µs → datetime → µs cost more than the query itself.
        result = session.connection().execute(
            select(
                type_coerce(Sample.ts, BigInteger()),
                Sample.lag_s,
                Sample.verdict,
                Sample.apply_rate,
                Sample.source_rate,
                Sample.not_received,
                Sample.received_not_applied,
            )
            .where(
                Sample.channel_id == channel_id,
                or_(*(and_(Sample.ts >= lo, Sample.ts < hi) for lo, hi in chunk)),
            )
            .order_by(Sample.ts)
        )
        rows.extend(
            SampleRow(us, lag, verdict, apply, source, missing, queued)
            for us, lag, verdict, apply, source, missing, queued in result
        )
    return rows


_ROW_COLUMNS = (
    "lag_s",
    "verdict",
    "apply_rate",
    "source_rate",
    "not_received",
    "received_not_applied",
)


def _as_stored(column: str) -> Callable[[float], float | int]:
    """A value read from the raw-series store (a float) as its ``samples`` column gives it back."""
    kind = Sample.__table__.c[column].type
    if isinstance(kind, Scaled):
        scale = kind.scale
        return lambda value: round(value * scale) / scale
    return lambda value: round(value)


_STORED = {column: _as_stored(column) for column in _ROW_COLUMNS}


def _sample_row(us: int, values: dict[str, float]) -> SampleRow | None:
    v = {c: _STORED[c](x) for c, x in values.items() if c in _STORED}
    verdict = v.get("verdict")
    if verdict is None:
        return None  # every poll's line has one; a line without is not a poll the table has
    return SampleRow(
        us,
        v.get("lag_s"),
        int(verdict),
        v.get("apply_rate"),
        v.get("source_rate"),
        _int_or_none(v.get("not_received")),
        _int_or_none(v.get("received_not_applied")),
    )


def _int_or_none(value: float | None) -> int | None:
    return None if value is None else int(value)


def sample_backlog(row: SampleRow) -> int | None:
    if row.not_received is None or row.received_not_applied is None:
        return None
    return row.not_received + row.received_not_applied
