"""A stopped heartbeat writer is not a lag, through channel_metrics.

A cluster seen once, in pt-heartbeat mode with its writer stopped: every replica caught up
(``trx_behind`` 0, timeline lag 0.0, Seconds_Behind_Master 0) was shown 2,734 s behind,
verdict ``apply_bound``, with only ``disagreement: true`` hinting at it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lagscope.analysis.channel_metrics import (
    ChannelMetrics,
    ChannelState,
    SourceView,
    channel_metrics,
)
from lagscope.analysis.codes import LagSource, Verdict
from lagscope.analysis.timeline import TimelineLag
from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.snapshot import (
    ChannelStatus,
    ClockReading,
    GtidState,
    HeartbeatReading,
    HeartbeatRow,
    InstanceSnapshot,
    IoState,
)

NOW = datetime(2026, 11, 25, 9, 0, 0, tzinfo=UTC)
LAST_BEAT = NOW.timestamp() - 2734.0
SOURCE_ID = 1


def replica(executed: str, retrieved: str, sbm: int | None = 0) -> InstanceSnapshot:
    status = ChannelStatus(
        "",
        IoState.YES,
        True,
        sbm,
        source_server_id=SOURCE_ID,
        retrieved_gtids=retrieved,
        executed_gtids=executed,
    )
    return InstanceSnapshot(
        server="replica",
        flavor=ServerFlavor("mariadb", (11, 8, 0)),
        dialect="mariadb",
        taken_at=NOW,
        round_trip_s=0.002,
        server_id=2,
        server_uuid=None,
        read_only=True,
        clock=ClockReading(0.0, 0.001),
        gtid=GtidState(executed=executed),
        channels=(status,),
        heartbeat=HeartbeatReading(
            (HeartbeatRow(SOURCE_ID, LAST_BEAT),), NOW.timestamp(), "heartbeat.heartbeat"
        ),
    )


def source(stopped_at: float | None) -> SourceView:
    return SourceView(
        executed="0-1-500",
        server_id=SOURCE_ID,
        source_rate=0.0,
        clock_offset_s=0.0,
        clock=ClockReading(0.0, 0.001),
        heartbeat_stopped_at=stopped_at,
    )


def metrics(snap: InstanceSnapshot, view: SourceView, timeline_s: float = 0.0) -> ChannelMetrics:
    state = ChannelState(verdict=Verdict.CAUGHT_UP, recent_classes=(Verdict.CAUGHT_UP,) * 2)
    return channel_metrics(snap.channels[0], snap, view, state, 1.0, TimelineLag(timeline_s, 1.0))


@pytest.mark.parametrize("stopped_at", [LAST_BEAT, None])
def test_a_caught_up_replica_of_a_stopped_writer_is_caught_up(stopped_at: float | None) -> None:
    # Stale (the writer's row on the source stopped) or not judged stale yet: the GTID sets say
    # nothing is missing, so the heartbeat's 2,734 s is not the lag either way.
    got = metrics(replica("0-1-500", "0-1-500"), source(stopped_at))
    assert got.heartbeat_lag_s == pytest.approx(2734.0)  # the reading is kept, as read
    assert got.lag_s == 0.0
    assert got.lag_source is LagSource.TIMELINE
    assert got.verdict is Verdict.CAUGHT_UP


def test_a_stale_heartbeat_raises_no_disagreement() -> None:
    assert metrics(replica("0-1-500", "0-1-500"), source(LAST_BEAT)).disagreement is False


def test_a_replica_far_behind_a_stopped_writer_keeps_its_lag() -> None:
    got = metrics(replica("0-1-200", "0-1-500", sbm=290), source(LAST_BEAT), timeline_s=300.0)
    assert got.lag_s == 300.0
    assert got.lag_source is LagSource.TIMELINE
    assert got.trx_behind == 300
    assert got.verdict is Verdict.APPLY_BOUND
