"""Lag episodes through the real pipeline (worker, beat, store) over the session lab: stopping
replica1's SQL thread opens an episode named "stopped", with the cause in the channel's current
causes; starting it again ends the episode once the channel has been caught up for the hold
(shortened here through LAGSCOPE_EPISODE_CAUGHT_UP_S)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from lagscope.analysis.causes.model import Cause
from lagscope.models import Channel
from lagscope.models.episodes import Episode, EpisodeCause

from .pipeline_stack import Pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration

HOLD_S = 4


@pytest.fixture(scope="module")
def pipeline_options() -> dict[str, Any]:
    return {"extra_env": {"LAGSCOPE_EPISODE_CAUGHT_UP_S": str(HOLD_S)}}


def sql_thread(lab: Any, name: str, running: bool) -> None:
    conn = lab.connect(name)
    try:
        with conn.cursor() as cur:
            cur.execute("START SLAVE SQL_THREAD" if running else "STOP SLAVE SQL_THREAD")
    finally:
        conn.close()


@pytest.fixture
def restart_sql(lab: Any) -> Iterator[None]:
    yield
    sql_thread(lab, "replica1", True)
    lab.wait_caught_up(timeout_s=120)


def stopped_episode(pipe: Pipeline, channel_id: int) -> tuple[Episode, EpisodeCause] | None:
    with pipe.session() as s:
        channel = s.get(Channel, channel_id)
        causes = [c["cause"] for c in (channel.current_causes or [])] if channel else []
        if "stopped" not in causes or channel is None or channel.episode_id is None:
            return None
        row = s.execute(
            select(Episode, EpisodeCause)
            .join(EpisodeCause, EpisodeCause.episode_id == Episode.id)
            .where(
                Episode.id == channel.episode_id,
                Episode.channel_id == channel_id,
                Episode.ended_at.is_(None),
                EpisodeCause.cause == int(Cause.STOPPED),
            )
        ).first()
        return (row[0], row[1]) if row else None


def test_a_stopped_sql_thread_is_an_episode_named_stopped_that_ends_after_the_restart(
    lab: Any, pipeline: Pipeline, restart_sql: None
) -> None:
    channel_id = pipeline.channel_id("replica1")
    assert channel_id is not None
    with pipeline.session() as s:
        before = set(s.scalars(select(Episode.id).where(Episode.channel_id == channel_id)))
    sql_thread(lab, "replica1", False)
    episode, cause = wait_until(
        lambda: stopped_episode(pipeline, channel_id),
        timeout_s=60,
        message="an open episode of replica1 with a 'stopped' segment and current cause",
    )
    assert episode.id not in before
    assert cause.ended_at is None and cause.sentence
    with pipeline.session() as s:
        siblings = s.scalars(
            select(Episode).where(Episode.channel_id != channel_id, Episode.ended_at.is_(None))
        ).all()
    assert all(e.main_cause != int(Cause.STOPPED) for e in siblings), "replica2 was not stopped"

    sql_thread(lab, "replica1", True)

    def ended() -> Episode | None:
        with pipeline.session() as s:
            row = s.get(Episode, episode.id)
            return row if row is not None and row.ended_at is not None else None

    done = wait_until(ended, timeout_s=90, message="the episode's end after the restart")
    assert done.main_cause == int(Cause.STOPPED)
    assert done.end_reason == "by_itself" and done.ended_by_change_id is None
    assert done.ended_at is not None and done.ended_at > done.started_at
    with pipeline.session() as s:
        segment = s.get(EpisodeCause, cause.id)
        channel = s.get(Channel, channel_id)
        assert segment is not None and segment.ended_at is not None
        assert channel is not None and channel.episode_id is None
        assert "stopped" not in [c["cause"] for c in channel.current_causes or []]
