"""Why each channel is behind, every tick: diagnosis inputs, findings, and the episode tracker.

After a tick's channel metrics are worked out, each channel (an unreachable replica's too) gets
its :class:`~lagscope.analysis.causes.model.CauseInputs`, :func:`diagnose` runs with the memory
stored on the channel, the findings become ``channel.current_causes``, and the episode tracker
advances (:mod:`lagscope.ingest.episodes` writes the episode rows on its events).

Cheap on the hot path: everything comes from the tick's snapshots and the channel rows already
loaded with the cluster. The one store read is the tracked parameters of an instance whose poll
did not read them, cached per worker process by the instance's parameter digest (which changes
exactly when a value does), so it runs once per process and change, not per tick.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.analysis.causes import words
from lagscope.analysis.causes.diagnose import diagnose
from lagscope.analysis.causes.episodes import (
    CAUGHT_UP_HOLD_S,
    EpisodePoint,
    EpisodeState,
    advance,
)
from lagscope.analysis.causes.model import (
    CauseInputs,
    DiagnosisMemory,
    EpisodeContext,
    Finding,
    SiblingView,
    SourceFacts,
    StepSeen,
)
from lagscope.analysis.causes.serial import (
    episode_state_from_json,
    episode_state_to_json,
    finding_to_json,
)
from lagscope.analysis.channel_metrics import ChannelMetrics, SourceView
from lagscope.analysis.rates import CounterRates
from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot
from lagscope.ingest.episodes import close_removed, record_episode_step
from lagscope.ingest.tick_memory import KeptDiagnosis, TickMemory, checkpoint_due
from lagscope.models import Channel, Cluster, Instance, ParamChange, ParamValue

log = logging.getLogger(__name__)

Params = Mapping[str, str | None]
_NO_PARAMS: Params = MappingProxyType({})
# (instance id, parameter digest) → values; bounded so a long-lived worker never grows it.
_PARAMS_CACHE: dict[tuple[int, str], Params] = {}
_PARAMS_CACHE_MAX = 4096
# (instance id, parameter digest) → its newest step; the digest changes exactly when a value does.
_STEP_CACHE: dict[tuple[int, str], StepSeen | None] = {}
# Changes this close to the newest one are the same step (an operator typing a few SET GLOBAL).
STEP_GROUP_S = 10.0
_STEP_CHANGES_MAX = 8


@dataclass(frozen=True, slots=True)
class ChannelTick:
    """One channel in one tick: its metrics, and its status when the replica answered."""

    instance: Instance
    channel: Channel
    at: float  # epoch s, the poll
    metrics: ChannelMetrics
    status: ChannelStatus | None = None
    snapshot: InstanceSnapshot | None = None


def record_causes(
    session: Session,
    cluster: Cluster,
    ticks: Sequence[ChannelTick],
    snapshots: Mapping[int, InstanceSnapshot],
    rates: Mapping[int, CounterRates],
    source_view: SourceView | None,
    caught_up_hold_s: float = CAUGHT_UP_HOLD_S,
    keep_statement_text: bool = False,
    memory: TickMemory | None = None,
) -> None:
    """Diagnose every channel of the tick and advance its episode. ``snapshots`` and ``rates``
    by instance id, for the instances that answered. Statements are kept as digests only,
    unless ``keep_statement_text`` (an admin's setting) keeps their full text too. ``memory``:
    an owner's memory of the cluster, which keeps the diagnosis memories between checkpoints
    (None: each is stored every tick)."""
    params = instance_params(session, cluster.instances, snapshots)
    source = _source_facts(cluster, snapshots, rates, source_view, params)
    source_instance = next((i for i in cluster.instances if i.role == "source"), None)
    for tick in ticks:
        before = _episode_state(tick.channel, memory)
        episode = None
        if before.in_episode and before.started_at is not None:
            steps = [newest_step(session, tick.instance)]
            if source_instance is not None and source_instance is not tick.instance:
                steps.append(newest_step(session, source_instance))
            found = [s for s in steps if s is not None]
            episode = EpisodeContext(
                before.started_at, before.main_cause, max(found, key=lambda s: s.at, default=None)
            )
        inputs = CauseInputs(
            at=tick.at,
            replica_name=tick.instance.name,
            region=tick.instance.region,
            channel=tick.channel.name,
            metrics=tick.metrics,
            status=tick.status,
            replica=tick.snapshot,
            params=params.get(tick.instance.id, _NO_PARAMS),
            rates=rates.get(tick.instance.id),
            source=source,
            siblings=tuple(_sibling(t) for t in ticks if t.channel is not tick.channel),
            interval_s=cluster.poll_interval_s,
            applier_statement=_applier_statement(tick.snapshot, tick.channel.name),
            episode=episode,
        )
        findings = _diagnose(tick.channel, inputs, memory)
        if not keep_statement_text:
            findings = tuple(without_full_text(f) for f in findings)
        tick.channel.current_causes = current_causes(findings, tick.channel.current_causes, tick.at)
        delay = float(tick.status.sql_delay) if tick.status else float(tick.channel.sql_delay_s)
        point = EpisodePoint(
            tick.at,
            tick.metrics.verdict,
            tick.metrics.lag_s,
            tick.metrics.trx_behind,
            findings,
            delay,
        )
        step = advance(before, point, caught_up_hold_s)
        state = record_episode_step(session, cluster, tick.channel, before, step, tick.at)
        tick.channel.episode_state = stored = episode_state_to_json(state)
        if memory is not None:
            memory.episodes[tick.channel.id] = (stored, state)
    for instance in cluster.instances:
        for channel in instance.channels:
            if channel.gone_at is not None and channel.episode_id is not None:
                close_removed(session, channel)


def _episode_state(channel: Channel, memory: TickMemory | None) -> EpisodeState:
    """The channel's episode state; an owner's memory holds it parsed for as long as the
    channel still carries the very JSON it was parsed from (anything else is read again)."""
    kept = memory.episodes.get(channel.id) if memory is not None else None
    if kept is not None and kept[0] is channel.episode_state:
        return kept[1]
    return episode_state_from_json(channel.episode_state)


def _diagnose(
    channel: Channel, inputs: CauseInputs, kept: TickMemory | None
) -> tuple[Finding, ...]:
    """The findings, with the channel's memory kept: on the channel's row every tick, or with
    an owner's memory and on the row every DIAGNOSIS_CHECKPOINT_S. A rule that fails is logged
    and the poll names no cause: the lag figures of the tick are stored all the same."""
    held = kept.diagnosis.get(channel.id) if kept is not None else None
    before = held.memory if held else DiagnosisMemory.from_json(channel.diagnosis_memory)
    try:
        findings, memory = diagnose(inputs, before)
    except Exception:  # a bug in one rule must not stop the cluster's polling
        log.exception("diagnosis failed for channel %s", channel.id)
        return ()
    stored_at = held.stored_at if held else None
    if stored_at is None or checkpoint_due(stored_at, inputs.at):
        channel.diagnosis_memory = memory.to_json()
        stored_at = inputs.at
    if kept is not None:
        kept.diagnosis[channel.id] = KeptDiagnosis(memory, stored_at)
    return findings


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
        what = ", ".join(
            f"{r.name} {_value(r.old_value)}→{_value(r.new_value)}" for r in reversed(group)
        )
        found = StepSeen(newest, instance.name, words.bounded(what))
    if len(_STEP_CACHE) >= _PARAMS_CACHE_MAX:
        _STEP_CACHE.clear()
    _STEP_CACHE[key] = found
    return found


def _value(value: str | None) -> str:
    return "NULL" if value is None else words.bounded(value, 40)


def without_full_text(finding: Finding) -> Finding:
    """The finding with no statement's full text in its evidence (digests stay)."""
    if not any(words.is_full_text(k) for k in finding.evidence):
        return finding
    kept = {k: v for k, v in finding.evidence.items() if not words.is_full_text(k)}
    return replace(finding, evidence=MappingProxyType(kept))


def current_causes(
    findings: Sequence[Finding], before: Sequence[Mapping[str, Any]] | None, at: float
) -> list[dict[str, Any]]:
    """``channel.current_causes``: the findings strongest first, each with ``since``, the first
    poll of the run of polls that named it (kept from the previous list)."""
    since = {c.get("cause"): c.get("since") for c in before or ()}
    out = []
    for finding in findings:
        row = finding_to_json(finding)
        row["since"] = since.get(row["cause"]) or at
        out.append(row)
    return out


def _sibling(tick: ChannelTick) -> SiblingView:
    m = tick.metrics
    return SiblingView(
        replica=tick.instance.name,
        region=tick.instance.region,
        lag_s=m.lag_s,
        not_received=m.not_received,
        received_not_applied=m.received_not_applied,
        verdict=int(m.verdict),
    )


def _source_facts(
    cluster: Cluster,
    snapshots: Mapping[int, InstanceSnapshot],
    rates: Mapping[int, CounterRates],
    view: SourceView | None,
    params: Mapping[int, Params],
) -> SourceFacts | None:
    source = next((i for i in cluster.instances if i.role == "source"), None)
    if source is None:
        return None
    snap = snapshots.get(source.id)
    return SourceFacts(
        name=source.name,
        region=source.region,
        commit_rate=view.source_rate if view else None,
        rates=rates.get(source.id),
        clock_offset_s=snap.clock.offset_s if snap else source.clock_offset_s,
        clock_resolution_s=snap.clock.resolution_s if snap else source.clock_resolution_s,
        params=params.get(source.id, _NO_PARAMS),
    )


def instance_params(
    session: Session, instances: Sequence[Instance], snapshots: Mapping[int, InstanceSnapshot]
) -> dict[int, Params]:
    """Each instance's current tracked parameters: as read by this poll, else as stored."""
    out: dict[int, Params] = {}
    missing: dict[int, str] = {}
    for instance in instances:
        snap = snapshots.get(instance.id)
        if snap is not None and snap.params_read:
            out[instance.id] = snap.params
            if instance.params_digest:
                _remember_params(instance.id, instance.params_digest, snap.params)
        elif instance.params_digest:
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
            out[instance_id] = _remember_params(instance_id, missing[instance_id], values)
    return out


def _remember_params(instance_id: int, digest: str, values: Params) -> Params:
    known = _PARAMS_CACHE.get((instance_id, digest))
    if known is not None:
        return known  # the same digest: the same values (a copy every poll cost more)
    if len(_PARAMS_CACHE) >= _PARAMS_CACHE_MAX:
        _PARAMS_CACHE.clear()
    frozen = MappingProxyType(dict(values))
    _PARAMS_CACHE[(instance_id, digest)] = frozen
    return frozen


def _applier_statement(snapshot: InstanceSnapshot | None, channel: str) -> str:
    """What a busy applier thread of the channel runs (MariaDB's pool serves every connection
    and shows channel ''), so DDL is named from its statement."""
    if snapshot is None:
        return ""
    for worker in snapshot.workers:
        if worker.busy and worker.statement and worker.channel in (channel, ""):
            return worker.statement
    return ""
