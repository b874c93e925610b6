"""Causes read straight off the channel's state: unreachable, broken, stopped, delayed by
design, and a clock that differs from the source's (docs/causes.md)."""

from __future__ import annotations

from types import MappingProxyType

from lagscope.analysis.causes import states, words
from lagscope.analysis.causes.model import Cause, EvidenceValue, Finding
from lagscope.analysis.causes.seen import Seen
from lagscope.analysis.codes import Verdict
from lagscope.collectors.snapshot import ChannelStatus, IoState

# A clock offset is only a finding beyond its measurement's resolution plus this much: below a
# second nothing Lagscope shows is visibly off, and NTP-disciplined clocks stay well inside it.
CLOCK_TOLERANCE_S = 1.0


def _evidence(**values: EvidenceValue) -> MappingProxyType[str, EvidenceValue]:
    return MappingProxyType(dict(values))


def _how_far(seen: Seen) -> str:
    """How far behind the source's timeline, or why that is not known: never a blank, and never
    "0 s" for a channel that still has transactions to apply."""
    metrics = seen.inputs.metrics
    lag = metrics.timeline_lag_s if metrics.timeline_lag_s is not None else metrics.lag_s
    trx = metrics.trx_behind
    if lag is not None and (lag >= 0.05 or not trx):
        if lag < 0.05:
            return "it is not behind yet: the source has written nothing it lacks"
        return f"it is {words.seconds(lag)} behind the source"
    if trx is not None:
        return f"it is {words.count(trx)} transactions behind the source"
    return "its lag behind the source is not known yet (no source timeline is recorded for it)"


def unreachable(seen: Seen) -> Finding:
    return Finding(
        Cause.UNREACHABLE,
        1.0,
        f"{seen.name} does not answer Lagscope's polls; {_how_far(seen)}.",
        f"Check that {seen.name} is up and reachable from Lagscope (host, port, credentials).",
        _evidence(lag_s=seen.inputs.metrics.lag_s),
    )


def _thread_words(status: ChannelStatus) -> str:
    stopped = []
    if status.io_state is not IoState.YES:
        stopped.append("receiver (IO) thread")
    if not status.sql_running:
        stopped.append("applier (SQL) thread")
    return " and ".join(stopped) or "replication"


def broken(seen: Seen, status: ChannelStatus) -> Finding:
    sql_failed = status.last_sql_errno != 0 and not status.sql_running
    errno = status.last_sql_errno if sql_failed else status.last_io_errno
    text = status.last_sql_error if sql_failed else status.last_io_error
    thread = "applier (SQL) thread" if sql_failed else "receiver (IO) thread"
    return Finding(
        Cause.BROKEN,
        1.0,
        f"{seen.name}'s {thread} stopped on error {errno}: {words.quote(text)}; {_how_far(seen)}.",
        "Fix what the error names, then START REPLICA; skipping the failing transaction loses "
        "its changes on this replica — check the data first.",
        _evidence(
            thread="sql" if sql_failed else "io",
            errno=errno,
            error=words.bounded(text),
            io_errno=status.last_io_errno,
            io_error=words.bounded(status.last_io_error),
            sql_errno=status.last_sql_errno,
            sql_error=words.bounded(status.last_sql_error),
            lag_s=seen.inputs.metrics.lag_s,
            trx_behind=seen.inputs.metrics.trx_behind,
        ),
    )


def stopped(seen: Seen, status: ChannelStatus | None) -> Finding:
    what = _thread_words(status) if status is not None else "replication"
    verb = "are" if " and " in what else "is"
    return Finding(
        Cause.STOPPED,
        1.0,
        f"{seen.name}'s {what} {verb} stopped (no error); {_how_far(seen)}.",
        f"If the stop was not planned, START REPLICA on {seen.name}.",
        _evidence(
            io_running=status.io_running if status is not None else None,
            sql_running=status.sql_running if status is not None else None,
            lag_s=seen.inputs.metrics.lag_s,
            trx_behind=seen.inputs.metrics.trx_behind,
        ),
    )


def delayed(seen: Seen, status: ChannelStatus) -> Finding:
    lag = seen.inputs.metrics.lag_s
    beyond = None if lag is None else max(0.0, lag - status.sql_delay)
    tail = "" if beyond is None else f"; {words.seconds(beyond)} behind beyond the delay"
    waiting = states.matches(status.sql_thread_state, states.DELAY_WAIT)
    return Finding(
        Cause.DELAYED_BY_DESIGN,
        0.95 if waiting or status.sql_remaining_delay is not None else 0.8,
        f"{seen.name} is delayed by design: it applies each transaction "
        f"{words.seconds(status.sql_delay)} after the source committed it{tail}.",
        "Nothing to do: the lag beyond the configured delay is what counts.",
        _evidence(
            sql_delay_s=status.sql_delay,
            remaining_delay_s=status.sql_remaining_delay,
            lag_s=lag,
            lag_beyond_delay_s=beyond,
            sql_state=words.bounded(status.sql_thread_state),
        ),
    )


def state_findings(seen: Seen) -> tuple[Finding, ...] | None:
    """The finding when the channel is not replicating (or is delayed on purpose); None when it
    is running and the other rules decide. The verdict (a vote over a few polls) decides; this
    poll's status supplies the details, and a verdict one poll behind the status (an error
    already cleared) never produces "error 0"."""
    verdict, status = seen.inputs.metrics.verdict, seen.inputs.status
    if verdict is Verdict.UNREACHABLE:
        return (unreachable(seen),)
    if seen.inputs.replica is None:
        # One poll that did not answer while the vote still says otherwise (a poll timed out on
        # a busy box): name nothing from it, as the verdict shows nothing of it. Named on it,
        # a 0 s "does not answer" became the main cause of the tuning story's episodes
        # (bench/no_false_cause.py); the episode's segments ride over one silent poll.
        return ()
    if verdict not in (Verdict.BROKEN, Verdict.STOPPED, Verdict.DELAYED_BY_DESIGN):
        return None
    if status is None:
        return (stopped(seen, None),) if verdict is not Verdict.DELAYED_BY_DESIGN else None
    if verdict is Verdict.DELAYED_BY_DESIGN:
        if status.sql_delay <= 0:
            # The delay was just removed (the verdict votes over a few polls): "delayed by 0 s"
            # would be false; a backlog left over is for the other rules.
            return None
        return (delayed(seen, status),)
    if status.broken:
        return (broken(seen, status),)
    if not (status.io_running and status.sql_running):
        return (stopped(seen, status),)
    return None  # running again: the other rules read this poll


def clock_skew(seen: Seen) -> Finding | None:
    """The replica's clock against the source's (or Lagscope's, with no source reading), beyond
    the two readings' resolution plus :data:`CLOCK_TOLERANCE_S`."""
    replica, source = seen.inputs.replica, seen.inputs.source
    if replica is None:
        return None
    offset, resolution = replica.clock.offset_s, replica.clock.resolution_s
    against = "Lagscope's"
    if source is not None and source.clock_offset_s is not None:
        offset -= source.clock_offset_s
        resolution += source.clock_resolution_s or 0.0
        against = f"the source's ({source.name})"
    if abs(offset) <= resolution + CLOCK_TOLERANCE_S:
        return None
    direction = "ahead of" if offset > 0 else "behind"
    return Finding(
        Cause.CLOCK_SKEW,
        0.9,
        f"{seen.name}'s clock is {abs(offset):.1f} s {direction} {against} clock "
        f"(measured to ±{resolution:.2f} s): Lagscope corrects heartbeat lag by the offsets, "
        "anything else comparing the two clocks is off by it.",
        f"Synchronise the clocks (NTP / chrony) on {seen.name}"
        + (f" and {source.name}." if source is not None else "."),
        _evidence(
            offset_s=round(offset, 3),
            resolution_s=round(resolution, 3),
            replica_offset_s=round(replica.clock.offset_s, 3),
            source_offset_s=source.clock_offset_s if source is not None else None,
        ),
    )
