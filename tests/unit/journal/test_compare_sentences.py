"""The Compare page's sentence over two channels: yes / no / not measurably different, in
words (never a field name), with the instance names and figures (journal/compare.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from lagscope.analysis.backlog import backlog_of
from lagscope.analysis.impact import WindowStats
from lagscope.journal.compare import Side, conclude_channels
from lagscope.models import Channel, Instance

T0 = datetime(2026, 3, 2, tzinfo=UTC)
T1 = datetime(2026, 3, 2, 0, 10, tzinfo=UTC)
# Code identifiers that must never reach an operator's sentence.
IDENTIFIER = re.compile(r"\b[a-z]+_[a-z_]+\b")


def side(name: str, region: str, p50: float, p95: float, missing: float, queued: float) -> Side:
    instance = Instance(name=name, region=region)
    channel = Channel(name="", instance=instance)
    stats = WindowStats(600, p50, p95, p95, 0.0, 100.0, 100.0)
    backlog = backlog_of([missing, missing], [queued, queued])
    return Side(channel, instance, T0, T1, stats, backlog)


def no_identifiers(sentence: str) -> None:
    assert not IDENTIFIER.findall(sentence), sentence


def test_alike_backlogs_are_not_measurably_different() -> None:
    near = side("replica1", "near", 48.3, 66.4, 3.0, 9200.0)
    far = side("replica2", "far", 47.7, 66.1, 4.0, 9100.0)
    found = conclude_channels(near, far)
    assert (found.network, found.lagging, found.cause) == ("not_measurably_different", None, None)
    assert found.conclusion == (
        "replica1 (near) and replica2 (far) are not measurably different (lag median/p95 "
        "48.3/66.4 s vs 47.7/66.1 s): the gap is within noise, so neither is behind because "
        "of its own network link; in both the backlog is mostly received and waiting to be "
        "applied, so what holds them is shared."
    )
    no_identifiers(found.conclusion)


def test_yes_the_far_replica_is_behind_because_of_the_network() -> None:
    near = side("replica1", "near", 0.4, 0.6, 0.0, 2.0)
    far = side("replica2", "far", 20.3, 21.5, 3020.0, 6.0)
    found = conclude_channels(near, far)
    assert (found.network, found.lagging, found.cause) == ("yes", "b", "not_received")
    assert found.conclusion.startswith(
        "replica2 (far) lags more than replica1 (near) (lag median/p95 20.3/21.5 s vs "
        "0.4/0.6 s), because of the network: on average 3020 transactions are not yet received"
    )
    no_identifiers(found.conclusion)


@pytest.mark.parametrize(
    ("near_missing", "far_missing", "far_queued", "expected"),
    [
        (0.0, 2.0, 2500.0, "but not because of the network"),  # its applier
        (700.0, 1000.0, 0.0, "but not because of its own link"),  # both receive late
    ],
)
def test_no_it_is_behind_for_another_reason(
    near_missing: float, far_missing: float, far_queued: float, expected: str
) -> None:
    near = side("replica1", "near", 5.0, 6.0, near_missing, 0.0)
    far = side("replica2", "far", 20.0, 22.0, far_missing, far_queued)
    found = conclude_channels(near, far)
    assert (found.network, found.lagging) == ("no", "b")
    assert expected in found.conclusion
    no_identifiers(found.conclusion)


def test_neither_behind() -> None:
    found = conclude_channels(
        side("replica1", "near", 0.1, 0.2, 0.0, 0.0), side("replica2", "far", 0.2, 0.3, 0.0, 0.0)
    )
    assert found.network is None and found.conclusion.startswith("Neither replica1 (near)")
    no_identifiers(found.conclusion)
