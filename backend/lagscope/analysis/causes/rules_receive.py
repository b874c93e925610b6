"""Receive-side causes: the link to the source, and the receiver's own relay-log fsyncs.

Both leave the backlog "not yet received"; the receiver (IO) thread's state tells them apart
(seen on MariaDB 10.11.19, docs/causes.md): *waiting for the source to send* most of the time while
far behind is the link; *queueing the event to the relay log* most of the time, with
``sync_relay_log=1`` / ``sync_master_info=1``, is the receiver fsyncing each event — near and far
replicas lag alike then, and it must not be called the network.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.model import Cause, EvidenceValue, Finding, SiblingView
from lagscope.analysis.causes.seen import Seen
from lagscope.analysis.codes import Verdict

# A sibling "does not lag" below this share of our lag (or under a second); it "lags alike" above
# ALIKE_SHARE of it.
_NOT_LAGGING_SHARE = 0.25
_NOT_LAGGING_S = 1.0
_ALIKE_SHARE = 0.5
_SYNC_INFO = ("sync_master_info", "sync_source_info")


def _sibling_lags(sibling: SiblingView, lag: float, short: int | None = None) -> bool | None:
    """True: lags alike; False: does not lag; None: in between or unknown.

    ``short``: our transactions not yet received. A backlog of small transactions can be
    thousands of transactions short while the lag in seconds still reads under a second (seen
    on the live lab as a receive backlog began): a sibling just as short is not "not lagging"
    whatever its seconds say."""
    if sibling.verdict is not None and sibling.verdict in (
        Verdict.STOPPED,
        Verdict.BROKEN,
        Verdict.UNREACHABLE,
    ):
        return None
    if short and sibling.not_received is not None:
        if sibling.not_received >= _ALIKE_SHARE * short:
            return True
        if sibling.not_received > _NOT_LAGGING_SHARE * short:
            return None
    if sibling.lag_s is None:
        return None
    if sibling.lag_s < max(_NOT_LAGGING_S, _NOT_LAGGING_SHARE * lag):
        return False
    if sibling.lag_s >= _ALIKE_SHARE * lag:
        return True
    return None


def _near(seen: Seen) -> list[SiblingView]:
    """Siblings, those in the source's region first (the "near" ones)."""
    source = seen.inputs.source
    region = source.region if source is not None else ""
    return sorted(seen.inputs.siblings, key=lambda s: not region or s.region != region)


def _where(sibling: SiblingView, seen: Seen) -> str:
    source = seen.inputs.source
    if source is not None and source.region and sibling.region == source.region:
        return f"{sibling.replica} in the source's region"
    return words.named(sibling.replica, sibling.region)


def _is_one(params: Mapping[str, str | None], name: str) -> bool:
    return (params.get(name) or "").strip() == "1"


def _fsync_params(seen: Seen) -> list[str]:
    """The receiver's fsync-per-event settings that are on, as the operator sets them."""
    return [f"{n}=1" for n in ("sync_relay_log", *_SYNC_INFO) if _is_one(seen.inputs.params, n)]


def relay_log_durability(seen: Seen) -> Finding | None:
    status = seen.inputs.status
    if status is None or not seen.held_behind:
        return None
    queueing, polls = seen.count(seen.io, "queueing")
    fsyncs = _fsync_params(seen)
    if queueing < 2 or not fsyncs:
        return None
    metrics = seen.inputs.metrics
    receive_side = metrics.verdict is Verdict.RECEIVE_BOUND or (metrics.not_received or 0) > (
        metrics.received_not_applied or 0
    )
    lag = metrics.lag_s or 0.0
    short = metrics.not_received
    alike = [s for s in seen.inputs.siblings if _sibling_lags(s, lag, short) is True]
    confidence = 0.6 + (0.15 if receive_side else 0.0) + (0.15 if alike else 0.0)
    if alike:
        other = alike[0]
        tail = (
            f"{words.named(other.replica, other.region)} lags alike "
            f"({words.seconds(other.lag_s or 0.0)} vs {words.seconds(lag)}), so it is not the "
            "network"
        )
    else:
        tail = "the receiver's fsyncs, not the network, are the limit"
    sentence = (
        f"{seen.name}'s receiver fsyncs every event it writes to the relay log "
        f"({', '.join(fsyncs)}) and was busy writing in {queueing} of the last {polls} polls; "
        f"{tail}."
    )
    evidence: dict[str, EvidenceValue] = {
        "io_state": words.bounded(status.io_thread_state),
        "io_queueing_polls": queueing,
        "polls": polls,
        "sync_relay_log": seen.inputs.params.get("sync_relay_log"),
        "lag_s": metrics.lag_s,
        "not_received": metrics.not_received,
        "received_not_applied": metrics.received_not_applied,
        "siblings_lagging_alike": len(alike),
    }
    for name in _SYNC_INFO:
        if name in seen.inputs.params:
            evidence[name] = seen.inputs.params.get(name)
    return Finding(
        Cause.RELAY_LOG_DURABILITY,
        min(confidence, 0.9),
        sentence,
        f"Set sync_relay_log=0 and {_info_name(seen)}=0 on {seen.name} (with GTID positions and "
        "relay_log_recovery=ON the replica recovers without them), or give the relay log faster "
        "storage; record it as a journal step to verify.",
        MappingProxyType(evidence),
    )


def _info_name(seen: Seen) -> str:
    return "sync_source_info" if "sync_source_info" in seen.inputs.params else "sync_master_info"


def network(seen: Seen) -> Finding | None:
    status, metrics = seen.inputs.status, seen.inputs.metrics
    if status is None or metrics.verdict is not Verdict.RECEIVE_BOUND or not seen.held_behind:
        return None
    if metrics.not_received == 0:
        return None  # nothing left to receive: the verdict (a vote) has not caught up yet
    waiting, polls = seen.count(seen.io, "waiting")
    if waiting < 2 or seen.most(seen.io, "queueing"):
        return None
    lag = metrics.lag_s or 0.0
    ranked = [(s, _sibling_lags(s, lag, metrics.not_received)) for s in _near(seen)]
    calm = [s for s, lags in ranked if lags is False]
    alike = [s for s, lags in ranked if lags is True]
    if alike and not calm:
        # Every other replica receives as late: the limit is upstream (the source sending),
        # not this replica's link.
        return None
    growing = seen.growing(seen.not_received)
    growth = seen.growth_per_s(seen.not_received)
    short = metrics.not_received or 0
    head = f"{seen.name} is {words.count(short)} transactions short of what the source wrote"
    if growing and growth is not None and growth > 0:
        head += f", {words.count(growth)} more each second"
    source_rate = metrics.source_rate
    if source_rate is not None and growth is not None and growth > 0:
        head += (
            f" (it receives {words.per_s(growth)} less than the source's "
            f"{words.per_s(source_rate)})"
        )
    if calm:
        tail = f"{_where(calm[0], seen)} does not lag: the link is the limit"
        confidence = 0.85 if growing else 0.75
    else:
        tail = "no other replica to compare with, so the link is the likely limit"
        confidence = 0.55 if growing else 0.45
    evidence: dict[str, EvidenceValue] = {
        "io_state": words.bounded(status.io_thread_state),
        "io_waiting_polls": waiting,
        "polls": polls,
        "not_received": metrics.not_received,
        "not_received_growth_per_s": None if growth is None else round(growth, 2),
        "lag_s": metrics.lag_s,
        "source_rate": source_rate,
        "sibling": calm[0].replica if calm else None,
        "sibling_lag_s": calm[0].lag_s if calm else None,
    }
    evidence.update(_receive_progress(seen))
    return Finding(
        Cause.NETWORK,
        confidence,
        f"{head}; {tail}.",
        f"Check the bandwidth and latency of the link to {seen.name}; compress the replication "
        "stream (slave_compressed_protocol / replica_compression_algorithms) or move the "
        "replica nearer the source.",
        MappingProxyType(evidence),
    )


def _receive_progress(seen: Seen) -> dict[str, EvidenceValue]:
    """MySQL 8.0+: how old the last transaction the receiver queued was, at the source."""
    replica = seen.inputs.replica
    if replica is None or replica.evidence is None:
        return {}
    progress = next((r for r in replica.evidence.receive if r.channel == seen.inputs.channel), None)
    if progress is None or progress.last_queued_original_commit_ts is None:
        return {}
    source = seen.inputs.source
    source_offset = source.clock_offset_s if source is not None and source.clock_offset_s else 0.0
    committed = progress.last_queued_original_commit_ts - source_offset
    return {"last_queued_commit_age_s": round(seen.at - committed, 3)}
