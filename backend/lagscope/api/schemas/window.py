"""Time windows as query parameters: ISO-8601 with a UTC offset, ``end`` defaulting to now and
``start`` to 24 hours before it; a bad one is a 422 whose ``errors`` name the field, exactly
like any other invalid query parameter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import Query
from fastapi.exceptions import RequestValidationError
from pydantic import (
    AfterValidator,
    AwareDatetime,
)

from lagscope.api.schemas.common import within_calendar
from lagscope.history.window import window_error

DEFAULT_SPAN = timedelta(hours=24)  # what a timeline shows when the caller gives no window

Moment = Annotated[AwareDatetime, AfterValidator(within_calendar)]
Instant = Annotated[Moment | None, Query(description="ISO-8601 with a UTC offset")]
Start = Annotated[
    Moment | None, Query(description="ISO-8601 with offset; default: 24 h before end")
]
End = Annotated[Moment | None, Query(description="ISO-8601 with offset; default: now")]


def invalid(field: str, message: str) -> RequestValidationError:
    return RequestValidationError(
        [{"type": "value_error", "loc": ("query", field), "msg": message, "input": None}]
    )


def check_window(
    start: datetime, end: datetime, start_field: str = "start", end_field: str = "end"
) -> tuple[datetime, datetime]:
    """The window in UTC, or a 422 naming the offending field."""
    if error := window_error(start, end, start_field, end_field):
        raise invalid(*error)
    return start.astimezone(UTC), end.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class TimeRange:
    start: datetime
    end: datetime


def time_range(start: Start = None, end: End = None) -> TimeRange:
    """``[start, end)``; ``end`` defaults to now and ``start`` to 24 hours before ``end``."""
    until = end or datetime.now(UTC)
    since = start or until - DEFAULT_SPAN
    error = window_error(since, until)
    if error and end is None and error[0] == "end":
        raise invalid("start", "must be before end, which defaults to now")
    return TimeRange(*check_window(since, until))


From = Annotated[
    Moment | None,
    Query(alias="from", description="ISO-8601 with offset; default: a span before 'to'"),
]
To = Annotated[Moment | None, Query(alias="to", description="ISO-8601 with offset; default: now")]


def from_to(start: From, end: To, span: timedelta) -> TimeRange:
    """``[from, to)`` with the same checks as :func:`time_range`, the fields named as sent."""
    until = end or datetime.now(UTC)
    since = start or until - span
    error = window_error(since, until, "from", "to")
    if error and end is None and error[0] == "to":
        raise invalid("from", "must be before to, which defaults to now")
    return TimeRange(*check_window(since, until, "from", "to"))
