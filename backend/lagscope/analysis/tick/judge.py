"""One tick's decisions as one pure function: :func:`judge_tick`.

From the cluster as its last ticks left it (:class:`ClusterBefore`) and this tick's polls it
decides everything the tick records (:class:`TickDecisions`): the heartbeat writer's state, the
source as the replicas are measured against it, each instance's rates and parameter changes,
each source's progress points, each channel's metrics, state, causes and episode step. It reads
nothing but its arguments (the source history is a read-only lookup) and writes nothing; the
recording step (ingest/recording.py) loads the before and writes the decisions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from lagscope.analysis.causes import words
from lagscope.analysis.causes.episodes import CAUGHT_UP_HOLD_S, EpisodeState
from lagscope.analysis.causes.model import StepSeen
from lagscope.analysis.channel_metrics import (
    ChannelState,
    SourceView,
    channel_metrics,
    unreachable_metrics,
)
from lagscope.analysis.heartbeat import writer_stopped_since
from lagscope.analysis.progress import progress_of
from lagscope.analysis.rates import CounterRates, counter_rates, rate
from lagscope.analysis.server_text import clean_text
from lagscope.analysis.tick.before import (
    ChannelBefore,
    ClusterBefore,
    InstanceBefore,
    Params,
    Poll,
    SourceHistory,
)
from lagscope.analysis.tick.causes import judge_causes
from lagscope.analysis.tick.decisions import (
    ChannelJudged,
    InstanceJudged,
    ParamChangeSeen,
    TickDecisions,
)
from lagscope.analysis.tick.sources import SourceProgressNow, channel_timeline, judge_sources
from lagscope.analysis.tick.workers import judge_workers
from lagscope.collectors.snapshot import InstanceSnapshot

# Changes this close to the newest one are the same step (an operator typing a few SET GLOBAL).
STEP_GROUP_S = 10.0

_Judged = tuple[InstanceBefore, ChannelBefore | None, ChannelJudged]


def judge_tick(
    before: ClusterBefore,
    polls: Mapping[int, Poll],
    history: SourceHistory,
    caught_up_hold_s: float = CAUGHT_UP_HOLD_S,
    keep_statement_text: bool = False,
) -> TickDecisions:
    """``polls`` by instance id (an instance not polled in this tick is left as it was);
    ``caught_up_hold_s``: how long a channel stays caught up before its episode ends;
    ``keep_statement_text``: whether causes keep statements' full text beside digests."""
    source = before.source
    source_poll = polls.get(source.id) if source else None
    source_snap = source_poll.snapshot if source_poll else None
    stopped_at = heartbeat_stopped_at(before, source_snap)
    view = source_view(source, source_snap, stopped_at)
    decisions = TickDecisions(stopped_at, view)
    sources, decisions.progress = judge_sources(before, polls, history)
    rates: dict[int, CounterRates] = {}
    snapshots: dict[int, InstanceSnapshot] = {}
    params: dict[int, Params] = {}
    steps: dict[int, StepSeen | None] = {}
    judged: list[_Judged] = []
    beat_s = before.heartbeat_interval_s if before.heartbeat_mode != "off" else None
    for instance in before.instances:
        poll = polls.get(instance.id)
        snap = poll.snapshot if poll else None
        params[instance.id], steps[instance.id] = instance.params, instance.step
        if poll is None:
            continue
        if snap is None:
            error = server_text(poll.error)
            decisions.instances.append(
                InstanceJudged(instance.id, poll.read_at, None, error, poll.error_kind)
            )
            judged.extend(_unreachable(instance, poll.read_at))
            continue
        judged_instance = _instance(instance, snap, poll.read_at)
        decisions.instances.append(judged_instance)
        snapshots[instance.id] = snap
        rates[instance.id] = judged_instance.rates  # type: ignore[assignment]
        if snap.params_read:
            params[instance.id] = snap.params
        if judged_instance.param_changes:
            steps[instance.id] = _step(instance, judged_instance)
        found, gone = _channels(instance, snap, poll.read_at, view, sources, history, beat_s)
        judged.extend(found)
        decisions.gone.extend((instance.id, c) for c in gone)
    judge_causes(
        before, judged, snapshots, rates, view, params, steps, caught_up_hold_s,
        keep_statement_text,
    )  # fmt: skip
    decisions.channels = [t for _, _, t in judged]
    return decisions


def heartbeat_stopped_at(before: ClusterBefore, source: InstanceSnapshot | None) -> float | None:
    """Is the writer's row on the source still advancing? A source that did not answer, or whose
    heartbeat table could not be read, leaves the last judgement as it was."""
    if before.heartbeat_mode == "off":
        return None
    if source is None or source.heartbeat is None:
        return before.heartbeat_stopped_at
    own = source.heartbeat.newest(source.server_id)
    return writer_stopped_since(
        own.ts if own else None, source.heartbeat.server_now, before.heartbeat_interval_s
    )


def source_view(
    source: InstanceBefore | None, snap: InstanceSnapshot | None, stopped_at: float | None
) -> SourceView | None:
    """The source in this tick; when it did not answer, what we last knew of it (no rate)."""
    if source is None:
        return None
    if snap is None:
        if source.gtid_executed is None:
            return None
        return SourceView(
            source.gtid_executed,
            source.server_id,
            None,
            source.clock_offset_s,
            heartbeat_stopped_at=stopped_at,
            server_uuid=source.server_uuid,
        )
    return SourceView(
        executed=snap.gtid.executed,
        server_id=snap.server_id,
        source_rate=rate(
            source.gtid_progress, source.last_ok_at, gtid_progress(snap), snap.taken_at.timestamp()
        ),
        clock_offset_s=snap.clock.offset_s,
        clock=snap.clock,
        strict_mode=snap.gtid.strict_mode is not False,
        heartbeat_stopped_at=stopped_at,
        parsed=snap.parsed,
        server_uuid=snap.server_uuid,
    )


def gtid_progress(snap: InstanceSnapshot) -> int | None:
    try:
        return progress_of(snap.gtids(snap.gtid.executed))
    except ValueError:
        return None


def server_text(text: str | None) -> str | None:
    """A server's message as stored: cleaned (a NUL would fail PostgreSQL's write of the whole
    tick), None when empty."""
    return clean_text(text) or None if text else None


def params_digest(values: Params) -> str:
    text = "\x1f".join(
        f"{k}\x1e{'' if v is None else v}\x1e{v is None:d}" for k, v in sorted(values.items())
    )
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _instance(instance: InstanceBefore, snap: InstanceSnapshot, read_at: float) -> InstanceJudged:
    at = snap.taken_at.timestamp()
    problems = "; ".join(f"{k}: {v}" for k, v in snap.problems.items())
    judged = InstanceJudged(
        instance.id,
        read_at,
        snap,
        server_text(problems),
        rates=counter_rates(instance.counters, instance.counters_at, snap.counters, at),
        gtid_progress=gtid_progress(snap),
        workers=judge_workers(snap, read_at, instance.workers, instance.user),
    )
    if snap.params_read and snap.params != instance.params:
        digest = params_digest(snap.params)
        if digest == instance.params_digest:
            return judged  # the stored rows hold a name no longer tracked: nothing changed
        judged.params_digest = digest
        # A value that differs from the stored one changed in (the last poll that read
        # parameters, this poll]: failed polls in between only widen that window.
        last_old_at = instance.params_read_at if instance.params_read_at is not None else read_at
        judged.param_changes = tuple(
            ParamChangeSeen(name, instance.params[name], value, last_old_at)
            for name, value in snap.params.items()
            if name in instance.params and instance.params[name] != value
        )
        judged.params_added = tuple(n for n in snap.params if n not in instance.params)
    return judged


def _step(instance: InstanceBefore, judged: InstanceJudged) -> StepSeen:
    """The instance's newest step once this tick's changes are made: they, with the stored step
    when it is within :data:`STEP_GROUP_S` (as the store will give it from the next tick)."""
    what = step_words((c.name, c.old_value, c.new_value) for c in judged.param_changes)
    if instance.step is not None and judged.at - instance.step.at <= STEP_GROUP_S:
        what = f"{instance.step.what}, {what}"
    return StepSeen(judged.at, instance.name, words.bounded(what))


def step_words(changes: Iterable[tuple[str, str | None, str | None]]) -> str:
    """A step's changes in words, oldest first: ``name old→new, …`` (unbounded)."""
    return ", ".join(f"{name} {_value(old)}→{_value(new)}" for name, old, new in changes)


def _value(value: str | None) -> str:
    return "NULL" if value is None else words.bounded(value, 40)


def _unreachable(instance: InstanceBefore, read_at: float) -> list[_Judged]:
    out: list[_Judged] = []
    for channel in instance.channels:
        if not channel.gone:
            metrics = unreachable_metrics(channel.state, read_at)
            tick = ChannelJudged(
                instance.id, channel.name, channel.id, read_at, metrics, None,
                episode_before=channel.episode,
            )  # fmt: skip
            out.append((instance, channel, tick))
    return out


def _channels(
    instance: InstanceBefore,
    snap: InstanceSnapshot,
    read_at: float,
    view: SourceView | None,
    sources: SourceProgressNow,
    history: SourceHistory,
    heartbeat_interval_s: float | None,
) -> tuple[list[_Judged], list[int]]:
    """The replica's channels as read, and the ids of those it no longer has."""
    known = {c.name: c for c in instance.channels}
    seen = {status.channel for status in snap.channels}
    gone = [c.id for c in instance.channels if c.name not in seen and not c.gone]
    at = snap.taken_at.timestamp()
    out: list[_Judged] = []
    for status in snap.channels:
        channel = known.get(status.channel)
        timeline = channel_timeline(sources, history, status, at, parsed=snap.parsed)
        state = channel.state if channel else ChannelState()
        metrics = channel_metrics(status, snap, view, state, heartbeat_interval_s, timeline)
        tick = ChannelJudged(
            instance.id,
            status.channel,
            channel.id if channel else None,
            read_at,
            metrics,
            status,
            episode_before=channel.episode if channel else EpisodeState(),
        )
        out.append((instance, channel, tick))
    return out, gone
