"""Catching up as the status and /metrics serve it: read back from the stored current causes."""

from __future__ import annotations

from datetime import UTC, datetime

from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.causes.serial import finding_to_json
from lagscope.history.catching_up import catching_up
from lagscope.history.episodes import CauseRef, current_causes
from lagscope.history.prometheus import exposition
from tests.unit.history.test_metrics_exposition import channel, samples

SINCE = "2026-11-28T04:44:00Z"


def stored(*findings: Finding) -> list[dict[str, object]]:
    return [{**finding_to_json(f), "since": 1_795_000_000.0} for f in findings]


def catching(**evidence: object) -> Finding:
    base: dict[str, object] = {
        "since": SINCE,
        "after": "step",
        "step": "sync_relay_log 1→0",
        "step_instance": "replica1",
        "step_at": "2026-11-28T04:43:58Z",
        "main_cause": "relay_log_durability",
        "limit": "serial_apply",
        "drain_s_per_s": 1.4,
        "eta_s": 25.0,
    }
    base.update(evidence)
    return Finding(Cause.CATCHING_UP, 0.8, "replica1 is catching up since …", "a", base)  # type: ignore[arg-type]


def test_the_status_reads_the_state_with_its_main_cause_and_limit() -> None:
    limit = Finding(Cause.SERIAL_APPLY, 0.8, "one thread.", "more threads.")
    state = catching_up(current_causes(stored(catching(), limit)))
    assert state is not None
    assert state.since == datetime(2026, 11, 28, 4, 44, tzinfo=UTC)
    assert state.after == "step" and state.step == "sync_relay_log 1→0"
    assert state.step_at == datetime(2026, 11, 28, 4, 43, 58, tzinfo=UTC)
    assert state.main_cause == CauseRef("relay_log_durability", "fsync per event on the receiver")
    assert state.limit == CauseRef("serial_apply", Cause.SERIAL_APPLY.words)
    assert (state.drain_s_per_s, state.eta_s) == (1.4, 25.0)


def test_no_state_without_the_finding_and_odd_values_are_left_out() -> None:
    assert catching_up(current_causes(stored(Finding(Cause.UNEXPLAINED, 0.3, "s.", "a")))) is None
    odd = catching(since="not a time", main_cause="not_a_cause", drain_s_per_s="fast", eta_s=True)
    state = catching_up(current_causes(stored(odd)))
    assert state is not None
    assert state.main_cause is None and state.drain_s_per_s is None and state.eta_s is None
    assert state.since is not None  # the run's first poll, as stored


def test_metrics_carry_the_state_its_drain_and_eta() -> None:
    draining = catching_up(current_causes(stored(catching())))
    text = exposition(
        [channel(causes=("catching_up",), catching_up=draining), channel(server="replica2")], []
    ).decode()
    found = samples(text)
    by_server = {s[0]["server"]: s[1] for s in found["lagscope_catching_up"]}
    assert by_server == {"replica1": 1.0, "replica2": 0.0}
    assert [(s[0]["server"], s[1]) for s in found["lagscope_catching_up_eta_seconds"]] == [
        ("replica1", 25.0)
    ]
    drain = found["lagscope_catching_up_drain_seconds_per_second"]
    assert [(s[0]["server"], s[1]) for s in drain] == [("replica1", 1.4)]
    causes = {(s[0]["server"], s[0]["cause"]) for s in found["lagscope_channel_cause"]}
    assert causes == {("replica1", "catching_up")}


def test_the_status_schema_serves_it() -> None:
    from lagscope.api.schemas.status import CatchingUpOut

    state = catching_up(current_causes(stored(catching())))
    out = CatchingUpOut.model_validate(state).model_dump(mode="json")
    assert out["main_cause"] == {
        "cause": "relay_log_durability",
        "words": "fsync per event on the receiver",
    }
    assert out["limit"]["cause"] == "serial_apply" and out["after"] == "step"
    assert out["since"] == "2026-11-28T04:44:00Z" and out["eta_s"] == 25.0
