"""Time windows as the API takes them: both ends in UTC, in a sane range, in order, not too long.

Pure (no store, no clock): the series, workers, group-commit, journal, compare and annotation
reads all check their ``start``/``end`` here, so they refuse the same windows with the same words.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lagscope.errors import InvalidInput

# A year and a day, so "the same day last year" fits; longer scans of 1 Hz samples belong to the
# rollups, not to the journal.
MAX_SPAN = timedelta(days=366)
# Instants outside this range are typos, and the arithmetic on them would overflow datetime.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def window_error(
    start: datetime, end: datetime, start_field: str = "start", end_field: str = "end"
) -> tuple[str, str] | None:
    """``(field, message)`` for a time window that is not acceptable, else None."""
    for name, moment in ((start_field, start), (end_field, end)):
        if moment.tzinfo is None:
            return name, "must carry a UTC offset"
        if not EARLIEST <= moment < LATEST:
            return name, "must be between the years 1970 and 9000"
    if start >= end:
        return end_field, f"must be after {start_field}"
    if end - start > MAX_SPAN:
        return start_field, f"the window may span at most {MAX_SPAN.days} days"
    return None


def require_window(
    start: datetime, end: datetime, start_field: str = "start", end_field: str = "end"
) -> None:
    if error := window_error(start, end, start_field, end_field):
        raise InvalidInput(f"{error[0]}: {error[1]}")
