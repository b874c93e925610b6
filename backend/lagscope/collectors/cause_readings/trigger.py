"""When the cause readings are sent (docs/causes.md): only after a poll that showed a channel
behind or an applier thread busy on one transaction for more than a poll.
"""

from __future__ import annotations

from lagscope.collectors.snapshot import ApplierWorker, ChannelStatus, InstanceSnapshot, IoState

# An applier thread on one transaction this long is worth asking about even at SBM 0: a
# poll's interval, the contract's "busy for more than one poll".
BUSY_S = 1.0


def channel_behind(channel: ChannelStatus) -> bool:
    """A running applier behind its source, or behind by an unknown amount.

    A stopped SQL thread is not: nothing holds an applier that is not running (the status
    already says stopped or broken). A delayed replica (``SQL_Delay``) is behind by design:
    only lag past the delay counts. The SQL thread's state alone does not count: it has no
    duration, and a busy state at SBM 0 is a healthy replica under load."""
    if not channel.sql_running:
        return False
    sbm = channel.seconds_behind_source
    if sbm is None:
        return channel.io_state is IoState.YES
    return sbm > channel.sql_delay


def busy_long(worker: ApplierWorker, previous: InstanceSnapshot) -> bool:
    """An applier thread holding one transaction for more than ``BUSY_S``: MariaDB says how
    long it has been in its state; MySQL 8.0+ when it started applying (server clock)."""
    if not worker.busy:
        return False
    if worker.state_time_s is not None:
        return worker.state_time_s >= BUSY_S
    if worker.applying_start_apply_ts is not None:
        server_now = previous.taken_at.timestamp() + previous.clock.offset_s
        return server_now - worker.applying_start_apply_ts >= BUSY_S
    return True


def behind(previous: InstanceSnapshot) -> bool:
    """The trigger: the previous poll showed a channel behind or an applier thread busy on
    one transaction for more than a poll."""
    return any(channel_behind(c) for c in previous.channels) or any(
        busy_long(w, previous) for w in previous.workers
    )
