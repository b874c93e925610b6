"""Why each channel of the tick is behind: its diagnosis inputs, its findings, its episode.

Every channel of the tick (an unreachable replica's too) gets its
:class:`~lagscope.analysis.causes.model.CauseInputs`; :func:`diagnose` runs with the channel's
memory, the findings become its current causes, and the episode tracker advances
(analysis/causes/episodes.py); the recording step writes the episode rows on its events.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes import words
from lagscope.analysis.causes.diagnose import diagnose
from lagscope.analysis.causes.episodes import CAUGHT_UP_HOLD_S, EpisodePoint, advance
from lagscope.analysis.causes.model import (
    CauseInputs,
    DiagnosisMemory,
    EpisodeContext,
    Finding,
    SiblingView,
    SourceFacts,
    StepSeen,
)
from lagscope.analysis.causes.serial import finding_to_json
from lagscope.analysis.channel_metrics import SourceView
from lagscope.analysis.rates import CounterRates
from lagscope.analysis.tick.before import ChannelBefore, ClusterBefore, InstanceBefore, Params
from lagscope.analysis.tick.decisions import ChannelJudged
from lagscope.collectors.snapshot import InstanceSnapshot

log = logging.getLogger(__name__)

_NO_PARAMS: Params = MappingProxyType({})


def judge_causes(
    before: ClusterBefore,
    judged: Sequence[tuple[InstanceBefore, ChannelBefore | None, ChannelJudged]],
    snapshots: Mapping[int, InstanceSnapshot],
    rates: Mapping[int, CounterRates],
    source_view: SourceView | None,
    params: Mapping[int, Params],
    steps: Mapping[int, StepSeen | None],
    caught_up_hold_s: float = CAUGHT_UP_HOLD_S,
    keep_statement_text: bool = False,
) -> None:
    """Fill each judged channel's findings, causes, diagnosis memory and episode step.
    ``params`` and ``steps``: each instance's current tracked parameters and newest step.
    Statements are kept as digests only, unless ``keep_statement_text`` (an admin's setting)."""
    source = before.source
    facts = _source_facts(source, snapshots, rates, source_view, params)
    for instance, channel, tick in judged:
        episode_before = tick.episode_before
        episode = None
        if episode_before.in_episode and episode_before.started_at is not None:
            found = [steps.get(instance.id)]
            if source is not None and source.id != instance.id:
                found.append(steps.get(source.id))
            newest = max((s for s in found if s), key=lambda s: s.at, default=None)
            episode = EpisodeContext(episode_before.started_at, episode_before.main_cause, newest)
        snap = snapshots.get(instance.id) if tick.status is not None else None
        inputs = CauseInputs(
            at=tick.at,
            replica_name=instance.name,
            region=instance.region,
            channel=tick.name,
            metrics=tick.metrics,
            status=tick.status,
            replica=snap,
            params=params.get(instance.id, _NO_PARAMS),
            rates=rates.get(instance.id),
            source=facts,
            siblings=tuple(_sibling(i, t) for i, _, t in judged if t is not tick),
            interval_s=before.poll_interval_s,
            applier_statement=_applier_statement(snap, tick.name),
            episode=episode,
        )
        try:
            memory = channel.diagnosis if channel else DiagnosisMemory()
            findings, tick.diagnosis = diagnose(inputs, memory)
        except Exception:  # a bug in one rule must not stop the cluster's polling
            log.exception("diagnosis failed for %s channel %r", instance.name, tick.name)
            findings = ()
        if not keep_statement_text:
            findings = tuple(without_full_text(f) for f in findings)
        tick.findings = findings
        tick.causes = current_causes(findings, channel.causes if channel else None, tick.at)
        m, delay = tick.metrics, _delay(channel, tick)
        point = EpisodePoint(tick.at, m.verdict, m.lag_s, m.trx_behind, findings, delay)
        tick.episode = advance(episode_before, point, caught_up_hold_s)


def _delay(channel: ChannelBefore | None, tick: ChannelJudged) -> float:
    """The channel's configured delay (SQL_Delay): as read, else as last stored."""
    if tick.status is not None:
        return float(tick.status.sql_delay)
    return channel.sql_delay_s if channel else 0.0


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


def _sibling(instance: InstanceBefore, tick: ChannelJudged) -> SiblingView:
    m = tick.metrics
    return SiblingView(
        replica=instance.name,
        region=instance.region,
        lag_s=m.lag_s,
        not_received=m.not_received,
        received_not_applied=m.received_not_applied,
        verdict=int(m.verdict),
    )


def _source_facts(
    source: InstanceBefore | None,
    snapshots: Mapping[int, InstanceSnapshot],
    rates: Mapping[int, CounterRates],
    view: SourceView | None,
    params: Mapping[int, Params],
) -> SourceFacts | None:
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


def _applier_statement(snapshot: InstanceSnapshot | None, channel: str) -> str:
    """What a busy applier thread of the channel runs (MariaDB's pool serves every connection
    and shows channel ''), so DDL is named from its statement."""
    if snapshot is None:
        return ""
    for worker in snapshot.workers:
        if worker.busy and worker.statement and worker.channel in (channel, ""):
            return worker.statement
    return ""
