"""Catching up through ``record_tick`` on an in-memory store: the episode's main cause and the
newest step reach diagnosis, so a drain after a stopped applier is started again (or after a
parameter change) is stored as catching up, not "cause not identified"."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from lagscope.models import Cluster
from tests.unit.ingest.test_ingest_episodes import channel, cluster, segments, session, tick

__all__ = ["cluster", "session"]  # the fixtures this module uses

SEQ = 100


Params = dict[int, dict[str, str | None]]


def stopped_then_draining(
    session: Session, cluster: Cluster, params_at: Params
) -> list[list[dict[str, object]]]:
    """Caught up, the SQL thread stopped while the source writes 10 trx/s, started again and
    applying 30 trx/s: each tick's current causes from the restart on."""
    for second in range(3):
        tick(session, cluster, second, source_seq=SEQ + second, applied_seq=SEQ + second,
             replica_params=params_at.get(second))  # fmt: skip
    for second in range(3, 12):
        tick(session, cluster, second, source_seq=SEQ + 10 * second, applied_seq=SEQ + 2,
             sql_running=False, replica_params=params_at.get(second))  # fmt: skip
    found = []
    for second in range(12, 20):
        source = SEQ + 10 * second
        applied = min(source, SEQ + 2 + 30 * (second - 11))
        tick(session, cluster, second, source_seq=source, applied_seq=applied,
             replica_params=params_at.get(second))  # fmt: skip
        found.append(list(channel(session).current_causes or []))
    return found


def test_the_drain_after_a_restart_is_catching_up_after_the_stop(
    session: Session, cluster: Cluster
) -> None:
    found = stopped_then_draining(session, cluster, {})
    catching = [c[0] for c in found if c and c[0]["cause"] == "catching_up"]
    assert catching, found
    assert not any(c["cause"] == "unexplained" for causes in found for c in causes), found
    evidence = catching[-1]["evidence"]
    assert evidence["main_cause"] == "stopped" and evidence["after"] == "cause_ended"
    assert "after replication stopped ended" in catching[-1]["sentence"]


def test_a_parameter_change_in_the_episode_is_the_step_it_catches_up_after(
    session: Session, cluster: Cluster
) -> None:
    before, after = {"slave_parallel_threads": "0"}, {"slave_parallel_threads": "4"}
    params = {0: before, 10: after, **{s: after for s in range(11, 20)}}
    found = stopped_then_draining(session, cluster, params)
    catching = [c[0] for c in found if c and c[0]["cause"] == "catching_up"]
    assert catching, found
    evidence = catching[-1]["evidence"]
    assert evidence["after"] == "step" and evidence["step"] == "slave_parallel_threads 0→4"
    assert evidence["step_instance"] == "r1" and evidence["main_cause"] == "stopped"


def stopped_then_applying(session: Session, cluster: Cluster, applied_per_s: int) -> list[Any]:
    """The source writes 100 trx/s; the SQL thread stopped for 27 s, then started again applying
    ``applied_per_s``: each tick's current causes from the restart on."""
    for second in range(3):
        tick(session, cluster, second, source_seq=SEQ + 100 * second,
             applied_seq=SEQ + 100 * second)  # fmt: skip
    for second in range(3, 30):
        tick(session, cluster, second, source_seq=SEQ + 100 * second, applied_seq=SEQ + 200,
             sql_running=False)  # fmt: skip
    found = []
    applied = SEQ + 200
    for second in range(30, 70):
        applied = min(SEQ + 100 * second, applied + applied_per_s)
        tick(session, cluster, second, source_seq=SEQ + 100 * second, applied_seq=applied)
        found.append(list(channel(session).current_causes or []))
    return found


def test_a_drain_of_a_tenth_of_a_second_a_second_is_stored_as_catching_up(
    session: Session, cluster: Cluster
) -> None:
    """110 trx/s applied against the source's 100: ~27 s behind, falling 0.1 s/s, under the lag
    slope's threshold. Once the pace has its polls, every tick is catching up, barely draining,
    and the episode's open segment is catching up, not "not identified"."""
    found = stopped_then_applying(session, cluster, 110)
    settled = found[10:]
    assert all([c["cause"] for c in causes] == ["catching_up"] for causes in settled), found
    evidence = settled[-1][0]["evidence"]
    assert evidence["pace"] == "barely_draining" and evidence["main_cause"] == "stopped"
    assert "keeping pace but barely draining" in settled[-1][0]["sentence"]
    assert "apply 110 trx/s vs source 100 trx/s" in settled[-1][0]["sentence"]
    assert segments(session)[-1] == ("catching_up", False)


def test_keeping_pace_after_the_stop_is_stored_as_such(session: Session, cluster: Cluster) -> None:
    found = stopped_then_applying(session, cluster, 100)
    last = found[-1]
    assert [c["cause"] for c in last] == ["catching_up"], found
    assert last[0]["evidence"]["pace"] == "not_draining"
    assert "keeping pace, not draining" in last[0]["sentence"]
    assert segments(session)[-1] == ("catching_up", False)
