"""Receive side (docs/causes.md): the link vs the receiver's relay-log fsyncs. The demo's phase A
(sync_relay_log=1, sync_master_info=1: near and far lag alike, IO thread queueing) must be named
relay-log durability and never the network."""

from __future__ import annotations

from types import MappingProxyType

from lagscope.analysis.causes.model import Cause, SiblingView
from lagscope.analysis.codes import Verdict
from lagscope.collectors.snapshot import CauseEvidence, ReceiveProgress
from tests.factories.causes import (
    IO_QUEUEING,
    IO_WAITING,
    NOW,
    SERIAL_DURABLE,
    at,
    behind_on_receive,
    causes,
    inputs,
    last,
    run,
    sibling,
    source,
    status,
)
from tests.unit.analysis.causes.test_causes_diagnose import assert_operator_words

FSYNC_EACH_EVENT = MappingProxyType(
    {**SERIAL_DURABLE, "sync_relay_log": "1", "sync_master_info": "1"}
)


def _phase_a(t: float, not_received: int, sibling_lag: float = 47.7):  # type: ignore[no-untyped-def]
    return inputs(
        behind_on_receive(lag_s=48.3, not_received=not_received),
        at=t,
        name="replica2",
        region="us",
        channel=status(io_thread_state=IO_QUEUEING),
        params=FSYNC_EACH_EVENT,
        src=source(region="eu"),
        siblings=(sibling("replica1", "eu", sibling_lag),),
    )


def test_phase_a_is_relay_log_durability_by_the_second_poll_and_never_network() -> None:
    polls = [_phase_a(NOW + i, 3000 + 100 * i) for i in range(6)]
    seen = run(polls)
    assert all(Cause.NETWORK not in [f.cause for f in found] for found in seen)
    assert causes(seen[1])[0] == "relay_log_durability"
    finding = seen[-1][0]
    assert "sync_relay_log=1" in finding.sentence and "sync_master_info=1" in finding.sentence
    assert "replica1 (eu) lags alike" in finding.sentence
    assert "not the network" in finding.sentence
    assert finding.evidence["io_queueing_polls"] == 3
    assert finding.confidence >= 0.85
    assert_operator_words(finding)


def test_relay_log_durability_needs_the_fsync_settings() -> None:
    polls = [
        inputs(
            behind_on_receive(),
            at=NOW + i,
            channel=status(io_thread_state=IO_QUEUEING),
            params=SERIAL_DURABLE,  # sync_relay_log=10000
        )
        for i in range(3)
    ]
    found = last(polls)
    assert Cause.RELAY_LOG_DURABILITY not in [f.cause for f in found]
    assert Cause.NETWORK not in [f.cause for f in found]
    (finding,) = found
    assert finding.cause is Cause.UNEXPLAINED
    assert "busy writing the relay log" in finding.sentence


def test_one_queueing_poll_is_not_most_of_the_recent_ones() -> None:
    first = _phase_a(NOW, 3000)
    waiting = inputs(
        behind_on_receive(lag_s=48.3),
        at=NOW + 1,
        channel=status(io_thread_state=IO_WAITING),
        params=FSYNC_EACH_EVENT,
    )
    assert Cause.RELAY_LOG_DURABILITY not in [f.cause for f in run([first, waiting])[-1]]


NEAR_CALM = (sibling("replica1", "eu", 0.3),)


def _far(t: float, not_received: int, siblings=NEAR_CALM):  # type: ignore[no-untyped-def]
    return inputs(
        behind_on_receive(lag_s=20.0, not_received=not_received),
        at=t,
        name="replica2",
        region="us",
        channel=status(io_thread_state=IO_WAITING),
        params=SERIAL_DURABLE,
        src=source(region="eu"),
        siblings=siblings,
    )


def test_network_when_the_far_one_waits_on_the_source_and_the_near_one_does_not_lag() -> None:
    seen = run([_far(NOW + i, 1000 + 150 * i) for i in range(3)])
    assert causes(seen[1]) == ["network"]
    finding = seen[-1][0]
    assert "replica1 in the source's region does not lag" in finding.sentence
    assert "the link is the limit" in finding.sentence
    assert "150 more each second" in finding.sentence
    assert finding.confidence >= 0.8
    assert finding.evidence["sibling"] == "replica1"
    assert_operator_words(finding)


def test_not_network_when_the_near_one_lags_alike() -> None:
    siblings = (sibling("replica1", "eu", 19.0),)
    found = last([_far(NOW + i, 1000 + 150 * i, siblings) for i in range(3)])
    assert Cause.NETWORK not in [f.cause for f in found]


def test_not_network_when_the_other_replica_is_as_short_though_its_seconds_are_low() -> None:
    """Seen on the live lab as sync_relay_log=1 began: both replicas ~1,050 transactions short,
    both under a second of lag; each was named "the link", citing the other as not lagging."""
    other = SiblingView("replica1", "eu", 0.4, 1052, 0, int(Verdict.RECEIVE_BOUND))
    polls = [
        inputs(
            behind_on_receive(lag_s=0.6, not_received=1059 + 500 * i),
            at=NOW + i,
            channel=status(io_thread_state=IO_WAITING),
            params=SERIAL_DURABLE,
            src=source(region="eu"),
            siblings=(other,),
        )
        for i in range(3)
    ]
    assert all(Cause.NETWORK not in [f.cause for f in found] for found in run(polls))


def test_not_network_once_nothing_is_left_to_receive() -> None:
    """The verdict votes over a few polls: at the end of a receive backlog it can still say
    receive-bound while nothing is short any more ("0 transactions short … the link")."""
    polls = [_far(NOW + i, 1000 + 150 * i) for i in range(3)] + [_far(NOW + 3, 0)]
    assert Cause.NETWORK not in [f.cause for f in run(polls)[-1]]


def test_network_without_a_sibling_is_only_likely() -> None:
    found = last([_far(NOW + i, 1000 + 150 * i, ()) for i in range(3)])
    assert causes(found) == ["network"]
    assert found[0].confidence < 0.6
    assert "no other replica to compare with" in found[0].sentence


def test_network_evidence_carries_mysql_receive_progress() -> None:
    progress = ReceiveProgress("", last_queued_original_commit_ts=NOW - 18.0)
    polls = [
        inputs(
            behind_on_receive(lag_s=20.0),
            at=NOW + i,
            product="mysql",
            channel=status(io_thread_state="Waiting for source to send event"),
            params={"replica_parallel_workers": "4"},
            evidence=CauseEvidence(receive=(progress,)),
            siblings=(sibling("replica1", "eu", 0.2),),
        )
        for i in range(2)
    ]
    (finding,) = last(polls)
    assert finding.cause is Cause.NETWORK
    assert finding.evidence["last_queued_commit_age_s"] == 19.0


def test_a_caught_up_replica_waiting_on_the_source_is_fine() -> None:
    from lagscope.analysis.codes import Verdict
    from tests.factories.causes import metrics

    poll = inputs(metrics(Verdict.CAUGHT_UP, lag_s=0.3), channel=status(io_thread_state=IO_WAITING))
    assert run([at(poll, NOW + i) for i in range(5)])[-1] == ()


def test_mysql_spelling_of_the_receiver_states_and_sync_source_info() -> None:
    params = {"replica_parallel_workers": "4", "sync_relay_log": "1", "sync_source_info": "1"}
    polls = [
        inputs(
            behind_on_receive(lag_s=40.0),
            at=NOW + i,
            product="mysql",
            channel=status(io_thread_state="Queueing source event to the relay log"),
            params=params,
        )
        for i in range(2)
    ]
    (finding,) = last(polls)
    assert finding.cause is Cause.RELAY_LOG_DURABILITY
    assert "sync_relay_log=1, sync_source_info=1" in finding.sentence
    assert "sync_source_info=0" in finding.action
