"""Episode rows, written on the tracker's events (analysis/causes/episodes.py).

An ``Episode`` row is inserted when an episode opens (``channel.episode_id`` then points at it),
an ``EpisodeCause`` row when a cause segment opens. While they go on, the episode's peak and
main cause and the open segments' evidence are written at most every ``SAVE_EVERY_S`` (a new
main cause at once); when a segment closes its row gets ``ended_at``, and when the episode ends
it gets ``ended_at`` and how it ended: ``after_step`` with the parameter change inside the
episode credited to its channel (analysis/step_credit.py: the replica's own latest change, else
the latest on a server it replicates from), else ``by_itself``. A channel that disappears from
its replica ends its episode as ``replica_removed``.

Updates go by key (``UPDATE … WHERE``), never read first: a tick touches these tables only on
events and every ``SAVE_EVERY_S`` while an episode lasts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from lagscope.analysis.causes.episodes import (
    ClosedSegment,
    EpisodeState,
    EpisodeStep,
    OpenSegment,
)
from lagscope.analysis.causes.model import Finding
from lagscope.analysis.causes.serial import (
    episode_state_from_json,
    episode_state_to_json,
    finding_to_json,
)
from lagscope.analysis.step_credit import StepCandidate, credited_step, upstream_of
from lagscope.models import Channel, Cluster, Instance, ParamChange
from lagscope.models.episodes import Episode, EpisodeCause

# The stored evidence and peak may be this far behind the channel's current causes
# (docs/causes.md, "Lag episodes").
SAVE_EVERY_S = 10.0
# The changes an ended episode's step is chosen among, newest first: a day of tuning is far
# fewer, and a fleet-wide config push must not make one episode's end read thousands of rows.
_STEP_CANDIDATES = 200


def _dt(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)


def record_episode_step(
    session: Session,
    cluster: Cluster,
    channel: Channel,
    before: EpisodeState,
    step: EpisodeStep,
    at: float,
) -> EpisodeState:
    """Write what ``step`` (from ``before``) changed; returns the state to store, ``saved_at``
    set when the figures and evidence were saved."""
    state = step.state
    if step.opened:
        _open(session, cluster, channel, state)
    episode_id = channel.episode_id
    if episode_id is None:
        return state
    if step.started:
        session.execute(insert(EpisodeCause), [_segment_row(episode_id, s) for s in step.started])
    for seg in step.closed:
        _close_segment(session, episode_id, seg)
    if step.ended_at is not None:
        ended = step.ended or state
        reason = _reason(session, cluster, channel, ended, step.ended_at)
        _end(session, episode_id, ended, step.ended_at, reason)
        channel.episode_id = None
        return state
    if step.opened:
        return replace(state, saved_at=at)  # its row and segments were just written
    due = state.saved_at is None or at - state.saved_at >= SAVE_EVERY_S
    if due or state.main_cause != before.main_cause:
        session.execute(update(Episode).where(Episode.id == episode_id).values(**_figures(state)))
    if due:
        for open_seg in step.current:
            if open_seg not in step.started:
                _save_evidence(session, episode_id, open_seg)
        state = replace(state, saved_at=at)
    return state


def close_removed(session: Session, channel: Channel) -> None:
    """The channel left its replica (RESET SLAVE ALL, a removed connection) mid-episode."""
    assert channel.episode_id is not None and channel.gone_at is not None
    state = episode_state_from_json(channel.episode_state)
    end = channel.gone_at.timestamp()
    for seg in state.segments:
        _close_segment(
            session, channel.episode_id, ClosedSegment(seg.cause, seg.started_at, end, seg.finding)
        )
    values = {**_figures(state), "ended_at": channel.gone_at, "end_reason": "replica_removed"}
    session.execute(update(Episode).where(Episode.id == channel.episode_id).values(**values))
    channel.episode_id = None
    channel.episode_state = episode_state_to_json(EpisodeState())


def _open(session: Session, cluster: Cluster, channel: Channel, state: EpisodeState) -> None:
    assert state.started_at is not None
    if channel.episode_id is not None:
        # A row left open by a state that was lost (reset by hand, an older version): it ended
        # no later than this new one starts; how, nobody saw.
        session.execute(
            update(Episode)
            .where(Episode.id == channel.episode_id, Episode.ended_at.is_(None))
            .values(ended_at=_dt(state.started_at), end_reason="by_itself")
        )
    episode = Episode(
        cluster_id=cluster.id,
        channel_id=channel.id,
        started_at=_dt(state.started_at),
        **_figures(state),
    )
    session.add(episode)
    session.flush()  # its id, for the cause rows and the channel
    channel.episode_id = episode.id


def _figures(state: EpisodeState) -> dict[str, Any]:
    return {
        "peak_lag_s": state.peak_lag_s,
        "peak_at": _dt(state.peak_at) if state.peak_at is not None else None,
        "main_cause": int(state.main_cause) if state.main_cause is not None else None,
    }


def _evidence(finding: Finding) -> dict[str, Any]:
    raw = finding_to_json(finding)
    return {
        "confidence": raw["confidence"],
        "sentence": raw["sentence"],
        "action": raw["action"],
        "evidence": raw["evidence"],
        "needs": raw["needs"],
    }


def _segment_row(episode_id: int, seg: OpenSegment) -> dict[str, Any]:
    return {
        "episode_id": episode_id,
        "cause": int(seg.cause),
        "started_at": _dt(seg.started_at),
        "ended_at": None,
        **_evidence(seg.finding),
    }


def _open_row(episode_id: int, cause: int) -> Any:
    return update(EpisodeCause).where(
        EpisodeCause.episode_id == episode_id,
        EpisodeCause.cause == cause,
        EpisodeCause.ended_at.is_(None),
    )


def _save_evidence(session: Session, episode_id: int, seg: OpenSegment) -> None:
    session.execute(_open_row(episode_id, int(seg.cause)).values(**_evidence(seg.finding)))


def _close_segment(session: Session, episode_id: int, seg: ClosedSegment) -> None:
    values = {**_evidence(seg.finding), "ended_at": _dt(seg.ended_at)}
    session.execute(_open_row(episode_id, int(seg.cause)).values(**values))


def _reason(
    session: Session, cluster: Cluster, channel: Channel, ended: EpisodeState, ended_at: float
) -> tuple[str, int | None]:
    """``after_step`` and the change credited to the channel among those made inside the
    episode, else ``by_itself``. One SELECT, at the end only."""
    assert ended.started_at is not None
    rows = session.execute(
        select(ParamChange.id, ParamChange.instance_id, ParamChange.first_new_at)
        .where(
            ParamChange.instance_id.in_(_ids(cluster.instances)),
            ParamChange.first_new_at >= _dt(ended.started_at),
            ParamChange.first_new_at <= _dt(ended_at),
        )
        .order_by(ParamChange.first_new_at.desc(), ParamChange.id.desc())
        .limit(_STEP_CANDIDATES)
    ).all()
    candidates = [StepCandidate(cid, iid, _epoch(at)) for cid, iid, at in rows]
    change = credited_step(candidates, channel.instance_id, _upstream(cluster, channel))
    return ("after_step", change) if change is not None else ("by_itself", None)


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _upstream(cluster: Cluster, channel: Channel) -> frozenset[int]:
    """The cluster's instances the channel replicates from, by the server ids replicas report."""
    by_server = {i.server_id: i.id for i in cluster.instances if i.server_id is not None}
    feeds = {
        i.id: [
            by_server[c.source_server_id]
            for c in i.channels
            if c.gone_at is None and c.source_server_id in by_server
        ]
        for i in cluster.instances
    }
    sources = [i.id for i in cluster.instances if i.role == "source"]
    first = by_server.get(channel.source_server_id) if channel.source_server_id else None
    return upstream_of(first, feeds, sources)


def _ids(instances: Iterable[Instance]) -> list[int]:
    return [i.id for i in instances]


def _end(
    session: Session,
    episode_id: int,
    ended: EpisodeState,
    ended_at: float,
    reason: tuple[str, int | None],
) -> None:
    values = {
        **_figures(ended),
        "ended_at": _dt(ended_at),
        "end_reason": reason[0],
        "ended_by_change_id": reason[1],
    }
    session.execute(update(Episode).where(Episode.id == episode_id).values(**values))
