"""An instance's poll as a hand-built snapshot: a source (server 1) or a replica, its GTIDs and
channels, on the lab's product unless told."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.snapshot import (
    ChannelStatus,
    ClockReading,
    GtidState,
    InstanceSnapshot,
    SourceStatus,
)

MARIADB = ServerFlavor("mariadb", (10, 11, 9))


def instance_snapshot(
    t0: datetime,
    second: float,
    server_id: int,
    executed: str,
    channels: Sequence[ChannelStatus] = (),
    *,
    flavor: ServerFlavor = MARIADB,
    params: Mapping[str, str | None] | None = None,
    counters: Mapping[str, int] | None = None,
    **kw: Any,
) -> InstanceSnapshot:
    """Taken ``second`` s after ``t0``; server 1 is the source (writable). ``params``: read by
    this poll when given (else skipped, as a poll between parameter reads)."""
    return InstanceSnapshot(
        server=f"s{server_id}",
        flavor=flavor,
        dialect=flavor.product,
        taken_at=t0 + timedelta(seconds=second),
        round_trip_s=0.001,
        server_id=server_id,
        server_uuid=None,
        read_only=server_id != 1,
        clock=ClockReading(0.0, 0.001),
        gtid=GtidState(executed=executed),
        channels=tuple(channels),
        source=SourceStatus("bin.000001", 4000),
        params=params or {},
        params_read=params is not None,
        counters=counters or {},
        **kw,
    )
