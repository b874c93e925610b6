"""Lagscope's own figures in /metrics (health/metrics.py), parsed back as a scraper reads them."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client.parser import text_string_to_metric_families

from lagscope.analysis.readiness import Facts, ProcessSeen, assess
from lagscope.health.metrics import SelfFigures, TickFigures, exposition

NOW = 2_000_000.0


def scraped(figures: SelfFigures) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(exposition(figures).decode()):
        for s in family.samples:
            found.setdefault(s.name, []).append((s.labels, s.value))
    return found


def figures(**facts: object) -> SelfFigures:
    look = Facts(
        now_s=NOW,
        report_every_s=5.0,
        queue_depth=3,
        processes=(
            ProcessSeen("worker", "a:1", NOW - 2),
            ProcessSeen("worker", "b:2", NOW - 40),  # gone: silent for 8 periods
            ProcessSeen("beat", "a:3", NOW - 1, NOW - 1),
        ),
        clusters=2,
        fastest_interval_s=1.0,
        newest_tick_s=NOW - 1,
        pending_deliveries=1,
        oldest_pending_s=NOW - 90,
    )
    look = replace(look, **facts)  # type: ignore[arg-type]
    ticks = (TickFigures("lab", NOW - 1.5, 0.042), TickFigures("new", None, None))
    missed = {"slow": 0, "expired": 7, "not_polled": 2}
    return SelfFigures(assess(look), look, ticks, missed, failed_attempts=4)


def test_the_self_figures_a_scraper_reads():
    got = scraped(figures())
    up = {labels["component"]: value for labels, value in got["lagscope_self_up"]}
    assert up["store"] == up["broker"] == up["workers"] == up["polling"] == 1.0
    assert up["deliveries"] == 1.0  # a warning (90 s old) is still up
    kinds = {labels["kind"]: value for labels, value in got["lagscope_self_processes"]}
    assert kinds == {"api": 0.0, "worker": 1.0, "beat": 1.0, "heartbeat": 0.0}
    assert got["lagscope_self_queue_depth"] == [({}, 3.0)]
    assert got["lagscope_self_oldest_undelivered_seconds"] == [({}, 90.0)]
    assert got["lagscope_self_tick_lag_seconds"] == [({"cluster": "lab"}, 1.5)]
    assert got["lagscope_self_tick_duration_seconds"] == [({"cluster": "lab"}, 0.042)]
    missed = {labels["reason"]: value for labels, value in got["lagscope_self_missed_ticks_1h"]}
    assert missed == {"slow": 0.0, "expired": 7.0, "not_polled": 2.0}
    assert got["lagscope_self_delivery_failures_1h"] == [({}, 4.0)]


def test_a_part_down_is_zero_and_an_unchecked_broker_has_no_depth():
    got = scraped(figures(broker_error="timed out", queue_depth=None))
    up = {labels["component"]: value for labels, value in got["lagscope_self_up"]}
    assert up["broker"] == 0.0
    assert "lagscope_self_queue_depth" not in got


def test_the_owner_engine_adds_its_owners_and_the_clusters_none_holds():
    assert "lagscope_self_poll_owners" not in scraped(figures())  # the Celery engine's facts
    got = scraped(figures(poll_engine="owner", owners=2, unowned_clusters=1))
    assert got["lagscope_self_poll_owners"] == [({}, 2.0)]
    assert got["lagscope_self_unowned_clusters"] == [({}, 1.0)]
    up = {labels["component"]: value for labels, value in got["lagscope_self_up"]}
    assert up["polling"] == 0.0  # a cluster no owner holds is not polled
