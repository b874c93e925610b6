"""Lagscope's own parts judged from one look (analysis/readiness.py)."""

from __future__ import annotations

from dataclasses import replace

from lagscope.analysis.readiness import Facts, ProcessSeen, State, ago, assess

NOW = 1_000_000.0
EVERY = 5.0


def healthy(**changes: object) -> Facts:
    facts = Facts(
        now_s=NOW,
        report_every_s=EVERY,
        queue_depth=0,
        processes=(
            ProcessSeen("api", "h:1", NOW - 2),
            ProcessSeen("worker", "h:2", NOW - 1),
            ProcessSeen("beat", "h:3", NOW - 4, last_dispatch_s=NOW - 0.5),
            ProcessSeen("heartbeat", "h:4", NOW - 3),
        ),
        clusters=3,
        fastest_interval_s=1.0,
        newest_tick_s=NOW - 0.8,
        heartbeat_clusters=1,
    )
    return replace(facts, **changes)  # type: ignore[arg-type]


def states(facts: Facts) -> dict[str, State]:
    return {c.name: c.state for c in assess(facts).components}


def message(facts: Facts, name: str) -> str:
    return next(c.message for c in assess(facts).components if c.name == name)


def test_all_parts_up_is_ok():
    readiness = assess(healthy())
    assert readiness.state is State.OK
    assert set(states(healthy()).values()) == {State.OK}
    assert readiness.failing() == []


def test_a_stopped_broker_is_down_and_says_polls_cannot_be_dispatched():
    facts = healthy(broker_error="connection refused or lost", queue_depth=None)
    assert states(facts)["broker"] is State.DOWN
    assert "no poll can be dispatched" in message(facts, "broker")
    assert assess(facts).state is State.DOWN


def test_polling_is_down_with_how_long_no_worker_polled():
    facts = healthy(newest_tick_s=NOW - 42)
    assert states(facts)["polling"] is State.DOWN
    assert message(facts, "polling") == "No worker has polled for 42 s."
    # Within three intervals of the fastest cluster (and one report period) it is fine.
    assert states(healthy(newest_tick_s=NOW - 4.9))["polling"] is State.OK


def test_a_worker_silent_for_three_reports_is_gone():
    worker = ProcessSeen("worker", "h:2", NOW - 3 * EVERY - 0.1)
    facts = healthy(processes=(*healthy().processes[:1], worker, *healthy().processes[2:]))
    assert states(facts)["workers"] is State.DOWN
    assert message(facts, "workers") == "No worker has reported for 15 s."
    late = replace(worker, seen_s=NOW - 3 * EVERY + 0.1)
    facts = healthy(processes=(late, *healthy().processes[2:]))
    assert states(facts)["workers"] is State.OK


def test_beat_gone_or_not_dispatching_is_down_and_two_beats_warn():
    others = tuple(p for p in healthy().processes if p.kind != "beat")
    assert states(healthy(processes=others))["beat"] is State.DOWN
    stuck = ProcessSeen("beat", "h:3", NOW - 1, last_dispatch_s=NOW - 30)
    facts = healthy(processes=(*others, stuck))
    assert states(facts)["beat"] is State.DOWN
    assert "has not handed a poll to the broker for 30 s" in message(facts, "beat")
    two = (
        *others,
        ProcessSeen("beat", "h:3", NOW - 1, NOW - 1),
        ProcessSeen("beat", "g:9", NOW - 2, NOW - 1),
    )
    assert states(healthy(processes=two))["beat"] is State.WARN
    assert assess(healthy(processes=two)).state is State.WARN


def test_an_old_undelivered_webhook_warns_with_its_age():
    facts = healthy(pending_deliveries=2, oldest_pending_s=NOW - 200)
    assert states(facts)["deliveries"] is State.WARN
    assert message(facts, "deliveries") == (
        "The oldest undelivered webhook has waited 3 min 20 s (2 pending)."
    )
    assert states(healthy(pending_deliveries=1, oldest_pending_s=NOW - 5))["deliveries"] is State.OK


def test_the_heartbeat_writer_is_judged_only_where_a_cluster_needs_it():
    others = tuple(p for p in healthy().processes if p.kind != "heartbeat")
    assert states(healthy(processes=others))["heartbeat"] is State.WARN
    assert "heartbeat" not in states(healthy(processes=others, heartbeat_clusters=0))


def test_a_store_that_cannot_be_read_is_down_and_the_rest_is_not_guessed():
    readiness = assess(Facts(now_s=NOW, report_every_s=EVERY, store_error="OperationalError"))
    assert readiness.state is State.DOWN
    assert [c.name for c in readiness.components] == ["store", "broker"]


def test_check_names_narrow_what_decides():
    facts = healthy(newest_tick_s=NOW - 60)
    readiness = assess(facts)
    assert [c.name for c in readiness.failing()] == ["polling"]
    assert readiness.failing(frozenset({"store"})) == []


def test_no_cluster_means_nothing_to_poll_and_no_dispatch_needed():
    beat = ProcessSeen("beat", "h:3", NOW - 1, last_dispatch_s=None)
    others = tuple(p for p in healthy().processes if p.kind != "beat")
    facts = healthy(
        clusters=0, fastest_interval_s=None, newest_tick_s=None, processes=(*others, beat)
    )
    assert states(facts)["polling"] is State.OK
    assert states(facts)["beat"] is State.OK


def test_ago_reads_like_an_operator_would():
    assert [ago(s) for s in (0, 42, 60, 200, 3600, 7500)] == [
        "0 s",
        "42 s",
        "1 min",
        "3 min 20 s",
        "1 h",
        "2 h 5 min",
    ]


def owned(**changes: object) -> Facts:
    """The owner engine, healthy: two owners hold every shard; beat dispatches no polls."""
    beat = ProcessSeen("beat", "h:3", NOW - 4, last_dispatch_s=None)
    base = healthy(poll_engine="owner", owners=2, unowned_clusters=0)
    return replace(base, processes=(*base.processes[:2], beat, base.processes[3]), **changes)  # type: ignore[arg-type]


def test_with_the_owner_engine_a_beat_that_dispatches_nothing_is_fine():
    assert assess(owned()).state is State.OK
    assert message(owned(), "beat") == "Beat is running the periodic jobs."
    assert message(owned(), "polling") == "Polled 1 s ago. 2 poll owners hold every shard."


def test_with_the_owner_engine_a_stopped_broker_degrades_but_polling_goes_on():
    facts = owned(broker_error="connection refused or lost", queue_depth=None)
    assert states(facts)["broker"] is State.WARN
    assert "polling and recording go on" in message(facts, "broker")
    assert assess(facts).state is State.WARN


def test_with_the_owner_engine_no_beat_is_a_warning_not_an_outage():
    facts = replace(owned(), processes=owned().processes[:2])
    assert states(facts)["beat"] is State.WARN
    assert "polling goes on" in message(facts, "beat")


def test_with_the_owner_engine_clusters_in_unheld_shards_are_down():
    facts = owned(unowned_clusters=2)
    assert states(facts)["polling"] is State.DOWN
    assert message(facts, "polling").startswith("2 clusters are in shards no poll owner holds")
    none = owned(owners=0)
    assert states(none)["polling"] is State.DOWN
    assert "No poll owner is alive" in message(none, "polling")
