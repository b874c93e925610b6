"""Catching up on the live lab, through the real pipeline (worker, beat, store; one poll a second,
no heartbeat): the receivers fsync every event (``sync_relay_log=1``, ``sync_master_info=1``)
under a write load until replica1 is well behind with "fsync per event on the receiver" as its
episode's main cause; then the fsyncs are relaxed while the load goes on, and every poll of the
drain is read as the store had it. Each drain poll names *catching up* after the step with the
cause that made the backlog beside it; none says *behind, cause not identified*.

The counts are printed (``pytest -s``): polls of the drain, catching up, not identified.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import func, select

from lagscope.analysis.codes import Verdict
from lagscope.lab import Lab
from lagscope.lab import incidents as inc
from lagscope.models import Channel, Sample

from .pipeline_stack import Pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration

REPLICA = "replica1"
# A backlog worth draining: tens of polls of it at the lab's pace.
BACKLOG_LAG_S = 10.0
BEHIND = (int(Verdict.RECEIVE_BOUND), int(Verdict.APPLY_BOUND))


@pytest.fixture(scope="module")
def pipeline_options() -> dict[str, Any]:
    return {"heartbeat": False}


@dataclass
class Poll:
    at: float
    lag_s: float | None
    verdict: int
    causes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        return [str(c.get("cause")) for c in self.causes]


def read(pipe: Pipeline, channel_id: int) -> tuple[Poll | None, dict[str, Any]]:
    """The channel's newest poll with the causes it stored, and its episode state (one
    transaction: a tick stores its sample and the channel's causes together)."""
    with pipe.session() as s:
        channel = s.get(Channel, channel_id)
        latest = s.scalar(select(func.max(Sample.ts)).where(Sample.channel_id == channel_id))
        if channel is None or latest is None:
            return None, {}
        sample = s.scalar(
            select(Sample).where(Sample.channel_id == channel_id, Sample.ts == latest)
        )
        assert sample is not None
        poll = Poll(
            latest.timestamp(), sample.lag_s, sample.verdict, list(channel.current_causes or [])
        )
        return poll, dict(channel.episode_state or {})


def relax(lab: Lab) -> None:
    for name in ("replica1", "replica2"):
        with lab.connect(name) as conn, conn.cursor() as cur:
            cur.execute("SET GLOBAL sync_relay_log = 0")
            cur.execute("SET GLOBAL sync_master_info = 0")


def test_the_drain_after_the_fsyncs_are_relaxed_is_catching_up_with_the_main_cause(
    lab: Lab, pipeline: Pipeline
) -> None:
    channel_id = pipeline.channel_id(REPLICA)
    assert channel_id is not None
    with inc.relay_log_durability(lab, replica=REPLICA) as made:
        assert made.cause == "relay_log_durability"

        def backlog_made() -> bool:
            poll, state = read(pipeline, channel_id)
            return bool(
                poll is not None
                and (poll.lag_s or 0.0) >= BACKLOG_LAG_S
                and state.get("main_cause") == "relay_log_durability"
            )

        wait_until(
            backlog_made,
            timeout_s=120,
            interval_s=0.2,
            message=f"{REPLICA} {BACKLOG_LAG_S:g} s behind, its episode's main cause the fsyncs",
        )
        relax(lab)
        relaxed_at = time.time()
        polls: dict[float, Poll] = {}

        def drained() -> bool:
            poll, _ = read(pipeline, channel_id)
            if poll is not None and poll.at > relaxed_at:
                polls.setdefault(poll.at, poll)
            return poll is not None and poll.at > relaxed_at and poll.verdict not in BEHIND
            # (the load goes on: caught up is the verdict, not a zero lag)

        wait_until(drained, timeout_s=180, interval_s=0.1, message=f"{REPLICA} caught up")
    ordered = [polls[at] for at in sorted(polls)]
    # The drain: polls behind with a backlog once the receiver's rule has let go of it.
    drain = [
        p
        for p in ordered
        if p.verdict in BEHIND
        and (p.lag_s or 0.0) >= 1.0
        and "relay_log_durability" not in p.labels
    ]
    catching = [p for p in drain if p.labels[:1] == ["catching_up"]]
    unexplained = [p for p in drain if "unexplained" in p.labels]
    print(
        f"\n{REPLICA}: {len(ordered)} polls after the relax, {len(drain)} draining, "
        f"{len(catching)} catching up, {len(unexplained)} not identified"
    )
    for p in ordered:
        print(f"  {p.at:.1f} lag={p.lag_s} verdict={p.verdict} {p.labels}")
    assert unexplained == [], f"not identified while draining: {len(unexplained)} polls"
    assert len(catching) >= 3, f"catching up in {len(catching)} of {len(drain)} drain polls"
    assert len(catching) == len(drain)
    for p in catching:
        finding = p.causes[0]
        evidence = finding["evidence"]
        assert evidence["main_cause"] == "relay_log_durability", evidence
        assert evidence["after"] == "step" and "sync_relay_log 1→0" in evidence["step"], evidence
        assert "catching up since" in finding["sentence"]
        assert "the backlog was made by fsync per event on the receiver" in finding["sentence"]
