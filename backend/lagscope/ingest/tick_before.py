"""What a tick starts from, loaded: the cluster's rows and a poll owner's memory as the plain
:class:`~lagscope.analysis.tick.before.ClusterBefore` the judgement reads.

Cheap on the hot path: everything comes from the rows already loaded with the cluster and the
owner's memory (tick_memory.py). The store reads are the tracked parameters as stored and each
instance's newest step (its latest parameter changes), both cached per worker process by the
instance's parameter digest (which changes exactly when a value does): once per process and
change, not per tick.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.causes import words
from lagscope.analysis.causes.episodes import EpisodeState
from lagscope.analysis.causes.model import DiagnosisMemory, StepSeen
from lagscope.analysis.causes.serial import episode_state_from_json
from lagscope.analysis.channel_metrics import ChannelState
from lagscope.analysis.codes import Verdict
from lagscope.analysis.eta import EtaMemory
from lagscope.analysis.tick.before import ChannelBefore, ClusterBefore, InstanceBefore, Params
from lagscope.analysis.tick.judge import STEP_GROUP_S, step_words
from lagscope.analysis.tick.workers import WorkersBefore
from lagscope.ingest.reader import PollResult
from lagscope.ingest.tick_memory import TickMemory
from lagscope.ingest.workers import load_workers, workers_before
from lagscope.models import Channel, Cluster, Instance, ParamChange, ParamValue

_NO_PARAMS: Params = MappingProxyType({})
# (instance id, parameter digest) → values; bounded so a long-lived worker never grows it.
_PARAMS_CACHE: dict[tuple[int, str], Params] = {}
_PARAMS_CACHE_MAX = 4096
# (instance id, parameter digest) → its newest step; the digest changes exactly when a value does.
_STEP_CACHE: dict[tuple[int, str], StepSeen | None] = {}
_STEP_CHANGES_MAX = 8


def cluster_before(
    session: Session,
    cluster: Cluster,
    memory: TickMemory | None = None,
    polls: Mapping[int, PollResult] | None = None,
) -> ClusterBefore:
    """``polls``: this tick's; each replica that answered gets its last applier-workers
    reading (an owner's ``memory`` holds them after its first tick, none stored included)."""
    instances = cluster.instances
    params = stored_params(session, instances)
    workers = memory.workers if memory is not None else {}
    answered = [i for i, p in (polls or {}).items() if p.snapshot and p.snapshot.is_replica]
    load_workers(session, workers, answered)
    in_episode = False
    before = []
    for instance in instances:
        channels = tuple(channel_before(c, memory) for c in instance.channels)
        in_episode = in_episode or any(c.episode.in_episode for c in channels)
        before.append((instance, channels))
    return ClusterBefore(
        poll_interval_s=cluster.poll_interval_s,
        heartbeat_mode=cluster.heartbeat_mode,
        heartbeat_interval_s=cluster.heartbeat_interval_s,
        heartbeat_stopped_at=_epoch(cluster.heartbeat_stopped_at),
        instances=tuple(
            # A step is read only while some channel is in an episode: nothing else uses it.
            instance_before(
                i,
                channels,
                params.get(i.id, _NO_PARAMS),
                newest_step(session, i) if in_episode else None,
                memory,
                workers_before(workers.get(i.id)),
            )
            for i, channels in before
        ),
    )


def instance_before(
    instance: Instance,
    channels: tuple[ChannelBefore, ...],
    params: Params,
    step: StepSeen | None,
    memory: TickMemory | None,
    workers: WorkersBefore | None = None,
) -> InstanceBefore:
    kept = memory.counters.get(instance.id) if memory is not None else None
    counters: Mapping[str, int] | None
    if kept is not None:
        counters, counters_at = kept.values, kept.at
    else:
        stored = dict(instance.last_counters or {})
        counters_at = stored.pop("_at", None)
        counters = stored or None
    return InstanceBefore(
        id=instance.id,
        name=instance.name,
        role=instance.role,
        region=instance.region,
        server_id=instance.server_id,
        server_uuid=instance.server_uuid,
        gtid_executed=instance.gtid_executed,
        gtid_progress=instance.gtid_progress,
        last_ok_at=_epoch(instance.last_ok_at),
        clock_offset_s=instance.clock_offset_s,
        clock_resolution_s=instance.clock_resolution_s,
        counters=counters,
        counters_at=counters_at,
        params=params,
        params_digest=instance.params_digest,
        params_read_at=_epoch(instance.params_read_at),
        step=step,
        user=instance.user,
        workers=workers,
        channels=channels,
    )


def channel_before(channel: Channel, memory: TickMemory | None = None) -> ChannelBefore:
    return ChannelBefore(
        id=channel.id,
        name=channel.name,
        gone=channel.gone_at is not None,
        state=channel_state(channel, memory),
        diagnosis=_diagnosis(channel, memory),
        episode=_episode_state(channel, memory),
        causes=channel.current_causes,
        sql_delay_s=float(channel.sql_delay_s or 0),
    )


def stored_classes(channel: Channel) -> tuple[Verdict, ...]:
    """The per-poll classes of the channel's last few polls as stored, oldest first."""
    return tuple(Verdict(int(c)) for c in channel.recent_classes.split(",") if c)


def channel_state(channel: Channel, memory: TickMemory | None = None) -> ChannelState:
    kept = memory.eta.get(channel.id) if memory is not None else None
    return ChannelState(
        applied_progress=channel.applied_progress,
        last_sample_at=_epoch(channel.last_sample_at),
        recent_classes=stored_classes(channel),
        verdict=Verdict(channel.verdict) if channel.verdict is not None else None,
        eta_memory=kept.memory if kept else EtaMemory.from_json(channel.eta_memory),
    )


def _diagnosis(channel: Channel, memory: TickMemory | None) -> DiagnosisMemory:
    held = memory.diagnosis.get(channel.id) if memory is not None else None
    return held.memory if held else DiagnosisMemory.from_json(channel.diagnosis_memory)


def _episode_state(channel: Channel, memory: TickMemory | None) -> EpisodeState:
    """The channel's episode state; an owner's memory holds it parsed for as long as the
    channel still carries the very JSON it was parsed from (anything else is read again)."""
    kept = memory.episodes.get(channel.id) if memory is not None else None
    if kept is not None and kept[0] is channel.episode_state:
        return kept[1]
    return episode_state_from_json(channel.episode_state)


def stored_params(session: Session, instances: Sequence[Instance]) -> dict[int, Params]:
    """Each instance's tracked parameters as stored (the values behind its digest)."""
    out: dict[int, Params] = {}
    missing: dict[int, str] = {}
    for instance in instances:
        if not instance.params_digest:
            continue
        cached = _PARAMS_CACHE.get((instance.id, instance.params_digest))
        if cached is None:
            missing[instance.id] = instance.params_digest
        else:
            out[instance.id] = cached
    if missing:
        stored: dict[int, dict[str, str | None]] = {i: {} for i in missing}
        rows = session.execute(
            select(ParamValue.instance_id, ParamValue.name, ParamValue.value).where(
                ParamValue.instance_id.in_(missing)
            )
        )
        for instance_id, name, value in rows:
            stored[instance_id][name] = value
        for instance_id, values in stored.items():
            out[instance_id] = remember_params(instance_id, missing[instance_id], values)
    return out


def remember_params(instance_id: int, digest: str, values: Mapping[str, str | None]) -> Params:
    """The values behind ``digest``, kept for the process's next ticks."""
    known = _PARAMS_CACHE.get((instance_id, digest))
    if known is not None:
        return known  # the same digest: the same values (a copy every poll cost more)
    if len(_PARAMS_CACHE) >= _PARAMS_CACHE_MAX:
        _PARAMS_CACHE.clear()
    frozen = MappingProxyType(dict(values))
    _PARAMS_CACHE[(instance_id, digest)] = frozen
    return frozen


def newest_step(session: Session, instance: Instance) -> StepSeen | None:
    """The instance's newest step: its latest parameter changes, those within
    :data:`STEP_GROUP_S` of the newest taken together. Read once per process and parameter
    digest, so a channel in an episode costs no query per poll."""
    if not instance.params_digest:
        return None
    key = (instance.id, instance.params_digest)
    if key in _STEP_CACHE:
        return _STEP_CACHE[key]
    rows = session.scalars(
        select(ParamChange)
        .where(ParamChange.instance_id == instance.id)
        .order_by(ParamChange.first_new_at.desc(), ParamChange.id.desc())
        .limit(_STEP_CHANGES_MAX)
    ).all()
    found = None
    if rows:
        newest = rows[0].first_new_at.timestamp()
        group = [r for r in rows if newest - r.first_new_at.timestamp() <= STEP_GROUP_S]
        what = step_words((r.name, r.old_value, r.new_value) for r in reversed(group))
        found = StepSeen(newest, instance.name, words.bounded(what))
    if len(_STEP_CACHE) >= _PARAMS_CACHE_MAX:
        _STEP_CACHE.clear()
    _STEP_CACHE[key] = found
    return found


def _epoch(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None
