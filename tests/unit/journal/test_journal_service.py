"""The journal's pure parts: grouping events into steps, window rules, span merging."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lagscope.errors import InvalidInput
from lagscope.history.window import window_error
from lagscope.journal.steps import (
    Event,
    JournalSettings,
    group_events,
    merge_spans,
)
from lagscope.models import Annotation, ParamChange

T = datetime(2030, 1, 1, tzinfo=UTC)


def s(seconds: float) -> datetime:
    return T + timedelta(seconds=seconds)


def change(name: str, last_old_s: float, first_new_s: float) -> Event:
    row = ParamChange(
        instance_id=1,
        name=name,
        old_value="1",
        new_value="0",
        last_old_at=s(last_old_s),
        first_new_at=s(first_new_s),
    )
    return Event(row.first_new_at, row.last_old_at, change=(row, "replica1"))


def note(at_s: float) -> Event:
    row = Annotation(cluster_id=1, starts_at=s(at_s), text="n", tags=[], author="a")
    return Event(row.starts_at, row.starts_at, annotation=row)


def test_events_chain_into_steps_by_gap_not_by_distance_from_the_first():
    # 0, 8, 16: each within 10 s of the previous one, so one burst although 16 > 10.
    events = [change("a", -2, 0), change("b", 6, 8), note(16), change("c", 40, 42)]
    steps = group_events(list(reversed(events)), group_s=10)
    assert [len(st.changes) + len(st.annotations) for st in steps] == [3, 1]
    first = steps[0]
    assert first.at == s(16)  # the last event of the burst: everything has happened by then
    assert first.changed_after == s(-2)  # the earliest moment any of it may have happened
    assert [c.name for c, _ in first.changes] == ["a", "b"] and len(first.annotations) == 1
    assert steps[1].at == s(42) and steps[1].changed_after == s(40)


def test_steps_fall_on_whole_milliseconds():
    """The compare link names a step's windows in milliseconds (JavaScript dates); a window
    edge at 40.304567 s excluded a sample at 40.3042 s that the link's 40.304 s included, and
    the compare page's p95 differed from the journal's (e2e, CI)."""
    (step,) = group_events([change("a", 39.3042567, 40.3045678)], group_s=10)
    assert step.at == s(40.304) and step.changed_after == s(39.304)


def test_group_zero_keeps_events_apart_unless_simultaneous():
    steps = group_events([change("a", -2, 0), change("b", -2, 0), change("c", 0, 1)], 0)
    assert [[c.name for c, _ in st.changes] for st in steps] == [["a", "b"], ["c"]]


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [
        (s(0), s(0), "end"),
        (s(10), s(0), "end"),
        (s(0) - timedelta(days=367), s(0), "start"),
        (datetime(1969, 12, 31, tzinfo=UTC), s(0), "start"),
        (s(0), datetime(9999, 1, 1, tzinfo=UTC), "end"),
        (datetime(2030, 1, 1), s(10), "start"),  # naive
    ],
)
def test_window_errors_name_the_field(start, end, field):
    error = window_error(start, end)
    assert error is not None and error[0] == field


def test_a_year_and_a_day_is_allowed():
    assert window_error(s(0) - timedelta(days=366), s(0)) is None
    assert window_error(s(0), s(1), "a_start", "a_end") is None
    assert window_error(s(1), s(0), "a_start", "a_end") == ("a_end", "must be after a_start")


def test_spans_merge_when_they_touch_or_overlap_and_empty_ones_vanish():
    spans = [(s(50), s(60)), (s(0), s(10)), (s(10), s(20)), (s(15), s(30)), (s(70), s(70))]
    assert merge_spans(spans) == [(s(0), s(30)), (s(50), s(60))]


def test_settings_are_checked():
    JournalSettings(20, 3, 5, 0).check()
    with pytest.raises(InvalidInput, match="width_s"):
        JournalSettings(0).check()
    with pytest.raises(InvalidInput, match="min_samples"):
        JournalSettings(min_samples=0).check()
