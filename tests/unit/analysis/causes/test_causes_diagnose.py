"""diagnose (docs/causes.md): no cause for a healthy channel, the state causes, clock skew,
unexplained, the memory, and sentences in an operator's words."""

from __future__ import annotations

import json
import re

import pytest

from lagscope.analysis.causes.diagnose import diagnose
from lagscope.analysis.causes.model import Cause, DiagnosisMemory, Finding
from lagscope.analysis.codes import Verdict
from lagscope.collectors.params import TRACKED_PARAMS
from lagscope.collectors.snapshot import EVIDENCE_TEXT_MAX, ClockReading, IoState
from tests.factories.causes import (
    IO_QUEUEING,
    NOW,
    PARALLEL_RELAXED,
    SQL_IDLE,
    at,
    behind_on_apply,
    causes,
    inputs,
    last,
    metrics,
    repeat,
    run,
    source,
    status,
)

# Parameter names are what an operator sets: allowed in a sentence. Any other snake_case word
# is a code identifier and is not.
_PARAMS = {n for p in TRACKED_PARAMS for n in (*p.mysql, *p.mariadb)} | {
    "slave_compressed_protocol",
    "replica_compression_algorithms",
    "relay_log_recovery",
}
_SNAKE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
_QUOTED = re.compile(r"“[^”]*”|'[^']*'")
_TABLE = re.compile(r"\b\w+\.\w+\b")  # schema.table: server data, not an identifier of ours


def assert_operator_words(finding: Finding) -> None:
    for text in (finding.sentence, finding.action):
        unquoted = _TABLE.sub("", _QUOTED.sub("", text))
        stray = [w for w in _SNAKE.findall(unquoted) if w not in _PARAMS]
        assert not stray, f"identifier {stray} in {text!r}"
    assert finding.sentence.endswith("."), finding.sentence
    assert 0.0 < finding.confidence <= 1.0
    for key, value in finding.evidence.items():
        assert isinstance(value, str | int | float | bool | type(None)), key
        if isinstance(value, str):
            assert len(value) <= EVIDENCE_TEXT_MAX, key
    json.dumps(dict(finding.evidence))


def test_a_healthy_caught_up_channel_has_no_finding() -> None:
    polls = repeat(inputs(metrics(Verdict.CAUGHT_UP, lag_s=0.2, trx_behind=0)), 10)
    assert all(found == () for found in run(polls))


def test_a_healthy_parallel_channel_under_load_has_no_finding() -> None:
    poll = inputs(
        metrics(Verdict.CAUGHT_UP, lag_s=0.4, trx_behind=3, apply_rate=1500, source_rate=1500),
        channel=status(sql_thread_state="Waiting for room in worker thread event queue"),
        params=PARALLEL_RELAXED,
    )
    assert all(found == () for found in run(repeat(poll, 10)))


@pytest.mark.parametrize(
    ("verdict", "chan", "cause"),
    [
        (Verdict.STOPPED, status(io_state=IoState.NO, sql_running=False), Cause.STOPPED),
        (
            Verdict.BROKEN,
            status(
                sql_running=False,
                last_sql_errno=1062,
                last_sql_error="Could not execute Write_rows_v1 event: Duplicate entry '7'",
            ),
            Cause.BROKEN,
        ),
        (
            Verdict.DELAYED_BY_DESIGN,
            status(
                sql_delay=3600,
                sql_thread_state="Waiting until MASTER_DELAY seconds after master executed event",
            ),
            Cause.DELAYED_BY_DESIGN,
        ),
    ],
)
def test_state_causes(verdict: Verdict, chan: object, cause: Cause) -> None:
    found = last([inputs(metrics(verdict, lag_s=3612.0, trx_behind=40), channel=chan)])  # type: ignore[arg-type]
    assert [f.cause for f in found] == [cause]
    assert_operator_words(found[0])


def test_a_delay_just_removed_is_not_delayed_by_design() -> None:
    """Seen on the live lab: after CHANGE MASTER TO MASTER_DELAY=0 the verdict still said
    delayed for a poll, and the replica was named "delayed by design … 0.0 s"."""
    chan = status(sql_delay=0, sql_thread_state="Slave has read all relay log; waiting for more")
    found = last([inputs(metrics(Verdict.DELAYED_BY_DESIGN, lag_s=0.8), channel=chan)])
    assert Cause.DELAYED_BY_DESIGN not in [f.cause for f in found]


def test_broken_names_the_error_and_how_far_behind() -> None:
    chan = status(sql_running=False, last_sql_errno=1062, last_sql_error="Duplicate entry '7'")
    (finding,) = last([inputs(metrics(Verdict.BROKEN, lag_s=340.0), channel=chan)])
    assert "1062" in finding.sentence and "Duplicate entry" in finding.sentence
    assert "340 s behind" in finding.sentence
    assert finding.evidence["errno"] == 1062


def test_a_stopped_replica_without_a_lag_figure_says_why_not_zero() -> None:
    chan = status(io_state=IoState.NO, sql_running=False)
    (finding,) = last([inputs(metrics(Verdict.STOPPED), channel=chan)])
    assert "not known" in finding.sentence
    assert " 0 " not in finding.sentence


def test_a_stopped_replica_with_a_backlog_is_never_zero_behind() -> None:
    chan = status(io_state=IoState.NO, sql_running=False)
    m = metrics(Verdict.STOPPED, lag_s=0.0, trx_behind=420)
    (finding,) = last([inputs(m, channel=chan)])
    assert "420 transactions behind the source" in finding.sentence
    timeline = metrics(Verdict.STOPPED, lag_s=0.0, timeline_lag_s=75.0, trx_behind=420)
    (finding,) = last([inputs(timeline, channel=chan)])
    assert "75 s behind the source" in finding.sentence


def test_unreachable() -> None:
    (finding,) = last([inputs(metrics(Verdict.UNREACHABLE), unreachable=True)])
    assert finding.cause is Cause.UNREACHABLE
    assert_operator_words(finding)


def test_one_poll_that_did_not_answer_names_nothing_until_the_verdict_says_unreachable() -> None:
    """Seen live (bench/no_false_cause.py, the tuning story on a box at load 18): one poll of
    each replica timed out while the verdict (a vote over 3 polls) still said receive-bound, and
    "does not answer" was named from it: a 0 s segment that became the episodes' main cause."""
    behind = metrics(Verdict.RECEIVE_BOUND, lag_s=40.0, trx_behind=20_000)
    polls = [
        inputs(behind, at=NOW + i, channel=status(io_thread_state=IO_QUEUEING)) for i in range(3)
    ]
    polls.append(inputs(behind, at=NOW + 3, unreachable=True))
    assert last(polls) == ()
    # Still silent at the next poll: the vote turns, and the cause with it (the second poll).
    polls.append(inputs(metrics(Verdict.UNREACHABLE), at=NOW + 4, unreachable=True))
    assert causes(last(polls)) == ["unreachable"]


def test_server_error_text_is_bounded() -> None:
    chan = status(sql_running=False, last_sql_errno=1146, last_sql_error="x" * 5000)
    (finding,) = last([inputs(metrics(Verdict.BROKEN), channel=chan)])
    assert len(str(finding.evidence["error"])) <= EVIDENCE_TEXT_MAX
    assert len(finding.sentence) < 300


def test_clock_skew_beyond_resolution_is_named_with_the_offset() -> None:
    poll = inputs(
        metrics(Verdict.CAUGHT_UP, lag_s=0.1),
        clock=ClockReading(2.3, 0.01),
        src=source(clock_offset_s=0.0, clock_resolution_s=0.01),
    )
    (finding,) = last([poll])
    assert finding.cause is Cause.CLOCK_SKEW
    assert "2.3 s ahead of the source's (src) clock" in finding.sentence
    assert "heartbeat" in finding.sentence
    assert_operator_words(finding)


@pytest.mark.parametrize(("replica", "src"), [(0.4, 0.0), (1.5, 1.2), (-0.9, 0.0), (1.2, 0.0)])
def test_clock_skew_within_resolution_and_tolerance_is_nothing(replica: float, src: float) -> None:
    poll = inputs(
        metrics(Verdict.CAUGHT_UP, lag_s=0.1),
        clock=ClockReading(replica, 0.3),
        src=source(clock_offset_s=src, clock_resolution_s=0.3),
    )
    assert last([poll]) == ()


def test_clock_skew_comes_after_the_cause_of_the_lag() -> None:
    poll = inputs(behind_on_apply(), clock=ClockReading(-5.0, 0.01))
    found = last(repeat(poll, 2))
    assert found[-1].cause is Cause.CLOCK_SKEW
    assert "5.0 s behind Lagscope's clock" in found[-1].sentence
    assert found[0].cause is not Cause.CLOCK_SKEW


def test_behind_with_nothing_matching_is_unexplained_with_the_split() -> None:
    poll = inputs(behind_on_apply(lag_s=12.0, trx=400), params=PARALLEL_RELAXED)
    assert run([poll]) == [()]  # one poll behind is a blip: nothing to explain yet
    (finding,) = last(repeat(poll, 2))
    assert finding.cause is Cause.UNEXPLAINED
    assert "12 s behind" in finding.sentence
    assert "395 received and waiting to be applied" in finding.sentence
    assert_operator_words(finding)


def test_unexplained_says_what_evidence_is_missing() -> None:
    from lagscope.collectors.snapshot import CauseEvidence

    evidence = CauseEvidence(problems={"transactions": "needs PROCESS"})
    poll = inputs(behind_on_apply(), params=PARALLEL_RELAXED, evidence=evidence)
    (finding,) = last(repeat(poll, 2))
    assert finding.cause is Cause.UNEXPLAINED
    assert finding.needs == "transactions: needs PROCESS"


def test_a_one_poll_backlog_between_caught_up_polls_is_a_blip() -> None:
    """Under load the verdict shows any backlog at once: a single behind poll names nothing,
    even with durable serial apply committing in every poll."""
    healthy = inputs(
        metrics(Verdict.CAUGHT_UP, lag_s=0.3), channel=status(sql_thread_state="Commit")
    )
    blip = inputs(behind_on_apply(lag_s=1.2, trx=40), channel=status(sql_thread_state="Commit"))
    polls = [at(p, NOW + i) for i, p in enumerate([healthy, blip, healthy, healthy, blip, healthy])]
    assert all(found == () for found in run(polls))


def test_memory_is_json_and_forgets_an_old_situation() -> None:
    poll = inputs(behind_on_apply(), channel=status(sql_thread_state="Commit"))
    _, memory = diagnose(poll, DiagnosisMemory())
    raw = json.loads(json.dumps(memory.to_json()))
    assert raw["sql"] == ["commit"]
    # An hour later the remembered states describe another situation: started afresh.
    _, later = diagnose(at(poll, NOW + 3600), DiagnosisMemory.from_json(raw))
    assert later.to_json()["sql"] == ["commit"]
    # A replayed (older) poll does not extend the history either.
    _, replay = diagnose(at(poll, NOW - 1), DiagnosisMemory.from_json(raw))
    assert replay.to_json()["sql"] == ["commit"]


def test_every_finding_is_in_operator_words() -> None:
    """The sentence checker itself fails on an identifier."""
    bad = Finding(Cause.UNEXPLAINED, 0.3, "lag because of received_not_applied.", "")
    with pytest.raises(AssertionError):
        assert_operator_words(bad)
    ok = Finding(Cause.UNEXPLAINED, 0.3, "Set sync_relay_log=0 ('Waiting_for_x').", "")
    assert_operator_words(ok)


def test_causes_helper() -> None:
    poll = inputs(behind_on_apply(), params=PARALLEL_RELAXED)
    assert causes(last(repeat(poll, 3))) == ["unexplained"]
    assert SQL_IDLE.startswith("Slave has read all relay log")


def test_no_unexplained_once_the_backlog_is_gone() -> None:
    """The verdict's window may still say behind for a poll after the replica caught up; seen
    live at a row lock's end: "replica1 is 0.1 s behind (0 … 0 …)" named unexplained."""
    behind = inputs(behind_on_apply(lag_s=12.0, trx=400), params=PARALLEL_RELAXED)
    drained = at(inputs(behind_on_apply(lag_s=0.08, trx=0), params=PARALLEL_RELAXED), NOW + 2)
    assert causes(last([*repeat(behind, 2), drained])) == []
