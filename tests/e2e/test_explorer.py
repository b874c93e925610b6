"""The cluster lag explorer over the real lab: live lines per replica, a stopped SQL thread shown
as stopped with a gap in its line, a parameter change as a lane and a marker, and annotations
created by clicking and dragging on the chart. Each test leaves the lab replicating."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from lagscope.demo.load import WriteLoad
from lagscope.ingest.commit_samples import sample_all
from lagscope.lab import Lab
from lagscope.security.secret_box import store_box
from tests.integration.api_stack import ApiServer
from tests.integration.pipeline_stack import SECRET as PIPELINE_SECRET
from tests.integration.pipeline_stack import Pipeline
from tests.integration.test_errant_live import remove_errant_domain, write_errant
from tests.integration.waiting import wait_until

from .conftest import shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]


def open_explorer(page: Page, pipeline: Pipeline, query: str = "range=15m") -> Locator:
    page.goto(f"/clusters/{pipeline.cluster_id}?{query}")
    chart = page.get_by_test_id("lag-chart")
    expect(chart).to_have_attribute("data-lines", "2")
    # Lines are drawn (a path per replica), not only announced.
    expect(chart.locator(".recharts-line-curve")).to_have_count(2)
    return chart


def test_explorer_shows_both_replicas_live(page: Page, pipeline: Pipeline):
    open_explorer(page, pipeline)
    panel = page.get_by_role("complementary", name="Replica status")
    for replica in ("replica1", "replica2"):
        status = panel.get_by_role("region", name=f"status of {replica}")
        expect(status).to_contain_text("caught up")
    # Panels below the fold fetch and draw once scrolled near.
    page.get_by_role(
        "heading", name="What does each server spend its writes on?"
    ).scroll_into_view_if_needed()
    commits = page.get_by_role("figure", name="Commits per second", exact=True)
    expect(commits.locator(".recharts-line-curve")).to_have_count(3)  # source and both replicas
    # The lab runs without semi-sync: its panel says so instead of drawing zeros.
    semi_sync = page.get_by_role("figure", name=re.compile(r"^Semi-sync: how long a commit waits"))
    expect(semi_sync).to_contain_text("semi-synchronous replication is not enabled")
    expect(semi_sync.locator(".recharts-line-curve")).to_have_count(0)
    # The URL carries the state: switching the lag source is shareable and goes back.
    page.get_by_label("heartbeat", exact=True).click()  # the URL, not the input, holds the state
    expect(page.get_by_label("heartbeat", exact=True)).to_be_checked()
    expect(page).to_have_url(re.compile(r"range=15m&source=heartbeat"))
    page.go_back()
    expect(page.get_by_label("best", exact=True)).to_be_checked()
    shot(page, "explorer")
    page.set_viewport_size({"width": 1280, "height": 800})
    shot(page, "explorer-1280")


def series_metrics(url: str) -> tuple[str, ...]:
    return tuple(parse_qs(urlsplit(url).query)["metric"])


def test_a_refresh_is_three_series_requests(page: Page, pipeline: Pipeline):
    """Every chart of the page refreshes in three series requests (the lag, the strips, the
    server panels), each asking for all of its metrics: one request per metric made 14."""
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/api/v1/series" in r.url else None)
    # The server's own lag (not streamed): every chart polls, the lag and strips every 2 s.
    open_explorer(page, pipeline, "range=15m&source=server")
    page.get_by_role(
        "heading", name="What does each server spend its writes on?"
    ).scroll_into_view_if_needed()
    commits = page.get_by_role("figure", name="Commits per second", exact=True)
    expect(commits.locator(".recharts-line-curve")).to_have_count(3)
    # One refresh cycle: from a request of the slowest (the panels, every 10 s) to its next.
    panels = lambda r: "/api/v1/series" in r.url and "metric=commits_per_s" in r.url  # noqa: E731
    with page.expect_request(panels, timeout=30_000):
        pass
    start = len(asked)
    with page.expect_request(panels, timeout=30_000):
        pass
    cycle = [series_metrics(url) for url in asked[start:]]
    lag = ("seconds_behind_source",)
    strips = ("not_received", "received_not_applied", "source_rate", "apply_rate")
    kinds = set(cycle)
    assert len(kinds) == 3 and {lag, strips} <= kinds, kinds
    assert next(k for k in kinds if k not in (lag, strips))[0] == "commits_per_s"
    # Per refresh (a lag request and whatever else polled with it): three at most, on average
    # over the cycle (the timers of the lag and the strips drift apart on a busy box).
    refreshes = cycle.count(lag)
    assert refreshes >= 2 and len(cycle) <= 3 * refreshes, cycle


@pytest.fixture
def replica1(lab: Lab) -> Iterator[object]:
    conn = lab.connect("replica1")
    try:
        yield conn
    finally:
        conn.close()


def test_stopped_sql_thread_turns_stopped_and_its_line_gaps(
    page: Page, pipeline: Pipeline, lab: Lab, replica1
):
    # The server's own figure (Seconds_Behind_Source) is NULL while the SQL thread is stopped:
    # that line gaps, with the reason. (The heartbeat lag goes on, rising: it is still known.)
    open_explorer(page, pipeline, "range=15m&source=server")
    status = page.get_by_role("region", name="status of replica1")
    try:
        with replica1.cursor() as cur:
            cur.execute("STOP SLAVE SQL_THREAD")
        expect(status).to_contain_text("stopped")
        expect(status.locator(".problem", has_text="SQL thread")).to_contain_text("stopped")
        gap = page.locator('[data-gap-channel="replica1"]')
        expect(gap).to_contain_text(re.compile(r"SQL thread stopped since \d\d:\d\d:\d\d"))
        expect(page.locator('[data-gap-channel="replica2"]')).to_have_count(0)
        shot(page, "explorer-stopped")
        page.goto("/")
        row = page.locator('[data-instance="replica1"] tr[data-channel="replica1"]')
        expect(row).to_contain_text("stopped")
        shot(page, "overview-stopped")
    finally:
        with replica1.cursor() as cur:
            cur.execute("START SLAVE SQL_THREAD")
    lab.wait_caught_up(timeout_s=60)


def test_parallel_apply_change_shows_a_lane_and_a_marker(
    page: Page, pipeline: Pipeline, lab: Lab, replica1
):
    with replica1.cursor() as cur:
        cur.execute("SELECT @@global.slave_parallel_threads, @@global.slave_parallel_mode")
        threads, mode = cur.fetchone()
    new_mode = "conservative" if mode == "optimistic" else "optimistic"
    chart = open_explorer(page, pipeline)
    try:
        with replica1.cursor() as cur:
            cur.execute("STOP SLAVE")
            cur.execute("SET GLOBAL slave_parallel_threads = 4")
            cur.execute(f"SET GLOBAL slave_parallel_mode = '{new_mode}'")
            cur.execute("START SLAVE")
        lane = page.get_by_role("listitem", name="replica1 · slave_parallel_threads")
        expect(lane).to_be_visible()
        expect(lane.locator(".param-lane-segment")).to_have_text([str(threads), "4"])
        mode_lane = page.get_by_role("listitem", name="replica1 · slave_parallel_mode")
        expect(mode_lane.locator(".param-lane-segment")).to_have_text([mode, new_mode])
        marker = chart.locator(".marker-param-change title", has_text="slave_parallel_threads")
        expect(marker).to_have_count(1)
        expect(marker).to_have_text(
            re.compile(rf"replica1: slave_parallel_threads {threads} → 4 — changed between")
        )
        # Hovering the chart draws its cursor through the lanes too, at the same x.
        x, y = plot_point(chart, 0.97)
        page.mouse.move(x, y)
        lanes_cursor = page.locator(".param-lanes .param-lanes-cursor")
        expect(lanes_cursor).to_have_count(1)
        chart_cursor = chart.locator(".recharts-tooltip-cursor")
        expect(chart_cursor).to_have_count(1)
        lane_box, cursor_box = lanes_cursor.bounding_box(), chart_cursor.bounding_box()
        assert lane_box is not None and cursor_box is not None
        assert abs(lane_box["x"] - cursor_box["x"]) <= 2, (lane_box, cursor_box)
        shot(page, "explorer-param-lanes")
        page.mouse.move(x, 5)  # off the chart: the lanes' cursor goes too
        expect(lanes_cursor).to_have_count(0)
    finally:
        with replica1.cursor() as cur:
            cur.execute("STOP SLAVE")
            cur.execute(f"SET GLOBAL slave_parallel_threads = {int(threads)}")
            cur.execute(f"SET GLOBAL slave_parallel_mode = '{mode}'")
            cur.execute("START SLAVE")
    lab.wait_caught_up(timeout_s=60)


def plot_point(chart: Locator, fraction: float) -> tuple[float, float]:
    # Mouse coordinates are the viewport's: saving a form further down (below the why strips)
    # scrolls the chart out of view, and a press there lands on nothing.
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    assert box is not None
    left, right = 64, 16  # the chart's y-axis width and right margin (chartGeometry.ts)
    x = box["x"] + left + (box["width"] - left - right) * fraction
    return x, box["y"] + box["height"] * 0.4


def drag_across(page: Page, chart: Locator, start: float, end: float) -> None:
    """Press at ``start`` of the plot's width, move in steps (a drag, not a click), release at
    ``end``."""
    x0, y0 = plot_point(chart, start)
    x1, _ = plot_point(chart, end)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, y0, steps=5)
    page.mouse.move(x1, y0, steps=5)
    page.mouse.up()


def test_click_annotates_a_point_and_drag_a_range(page: Page, pipeline: Pipeline):
    chart = open_explorer(page, pipeline)
    x, y = plot_point(chart, 0.5)
    page.mouse.click(x, y)
    form = page.get_by_role("form", name="New point annotation")
    form.get_by_label("Text").fill("raised the flush interval")
    form.get_by_label("Tags (comma-separated)").fill("tuning, flush")
    form.get_by_role("button", name="Save annotation").click()
    expect(form).to_be_hidden()
    notes = page.get_by_role("list", name="Annotations in this range")
    point = notes.locator('li[data-kind="point"]', has_text="raised the flush interval")
    expect(point).to_contain_text("admin")
    expect(point).to_contain_text("tuning")
    expect(chart.locator(".marker-annotation title", has_text="raised the flush")).to_have_count(1)

    drag_across(page, chart, 0.2, 0.4)
    form = page.get_by_role("form", name="New range annotation")
    form.get_by_label("Text").fill("load test window")
    form.get_by_label("Scope").select_option(label="instance replica2")
    form.get_by_role("button", name="Save annotation").click()
    ranged = notes.locator('li[data-kind="range"]', has_text="load test window")
    expect(ranged).to_contain_text("replica2")
    expect(ranged).to_contain_text(re.compile(r"\d\d:\d\d:\d\d–\d\d:\d\d:\d\d"))
    shot(page, "explorer-annotations")

    # Edit and delete where allowed (the admin wrote them).
    ranged.get_by_role("button", name="Edit annotation: load test window").click()
    form = page.get_by_role("form", name="Edit annotation")
    form.get_by_label("Text").fill("load test window (2 threads)")
    form.get_by_role("button", name="Save annotation").click()
    expect(notes).to_contain_text("load test window (2 threads)")
    notes.get_by_role("button", name="Delete annotation: load test window (2 threads)").click()
    expect(notes.locator('li[data-kind="range"]')).to_have_count(0)


def wait_chart_span(page: Page, low_ms: int, high_ms: int) -> None:
    """Wait until the lag chart's x-axis spans between low_ms and high_ms."""
    page.wait_for_function(
        """([low, high]) => {
            const el = document.querySelector('[data-testid="lag-chart"]');
            const span = Number(el?.dataset.endMs) - Number(el?.dataset.startMs);
            return span > low && span < high;
        }""",
        arg=[low_ms, high_ms],
    )


def test_drag_in_zoom_mode_zooms_and_reset_restores(page: Page, pipeline: Pipeline):
    chart = open_explorer(page, pipeline)
    wait_chart_span(page, 14 * 60_000, 16 * 60_000)
    ticks = chart.locator(".recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-value")
    # A 15-minute axis is labelled in minutes; one of 5 minutes or less in seconds.
    expect(ticks.first).to_have_text(re.compile(r"^\d\d:\d\d$"))
    modes = page.get_by_role("group", name="Drag to:")
    zoom = modes.get_by_role("button", name="zoom", exact=True)
    # Keyboard-accessible: focus the toggle and press it with the keyboard.
    zoom.focus()
    page.keyboard.press("Enter")
    expect(zoom).to_have_attribute("aria-pressed", "true")
    expect(modes.get_by_role("button", name="annotate")).to_have_attribute("aria-pressed", "false")

    # The latest 15 % of the window: a module's fresh lab has polled only the last minute or two.
    drag_across(page, chart, 0.85, 0.999)
    # The URL carries the zoom (a fixed window and the preset it left); no annotation form opens.
    expect(page).to_have_url(re.compile(r"from=[^&]+&to=[^&]+&preset=15m"))
    expect(page.get_by_role("form", name="New range annotation")).to_have_count(0)
    expect(page.get_by_role("status").filter(has_text="fixed range")).to_be_visible()
    # The axis narrows to the dragged ~15 % of the 15 minutes (2¼ min), with the lines in it.
    wait_chart_span(page, 90_000, 180_000)
    expect(chart.locator(".recharts-line-curve")).to_have_count(2)
    expect(ticks.first).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
    shot(page, "explorer-zoomed")

    # Back and forward walk the zoom like any other range change.
    page.go_back()
    expect(page).to_have_url(re.compile(r"range=15m$"))
    page.go_forward()
    expect(page).to_have_url(re.compile(r"preset=15m"))

    page.get_by_role("button", name="Reset zoom").click()
    expect(page).to_have_url(re.compile(r"range=15m$"))
    expect(page.get_by_role("button", name="Reset zoom")).to_have_count(0)
    expect(page.get_by_role("status").filter(has_text="live")).to_be_visible()
    expect(chart.locator(".recharts-line-curve")).to_have_count(2)
    wait_chart_span(page, 14 * 60_000, 16 * 60_000)
    expect(ticks.first).to_have_text(re.compile(r"^\d\d:\d\d$"))


SET_HIDDEN = """hidden => {
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    document.dispatchEvent(new Event("visibilitychange"));
}"""


BACKLOG_FETCHED = """() => performance.getEntriesByType("resource").some(
    e => e.name.includes("/api/v1/series") && e.name.includes("metric=not_received")
)"""


NEW_EDGES = """first => {
    const t = Number(document.querySelector("[data-testid=lag-chart]").dataset.lastT);
    const seen = (window.__edges ??= new Set());
    if (t > first) seen.add(t);
    return seen.size >= 3;
}"""


def test_live_range_follows_the_stream_without_refetching(page: Page, pipeline: Pipeline):
    # A live range is fetched once; then the stream's samples move the chart's right edge, and
    # the range is not fetched again (polling would re-request /series every 2 s).
    lag_fetches: list[str] = []
    backlog_fetches: list[str] = []  # the receive/apply strips: in the stream too
    streams: list[str | None] = []  # the Last-Event-ID each stream request sent

    def count(request) -> None:
        if "/api/v1/series" in request.url and "metric=lag_s" in request.url:
            lag_fetches.append(request.url)
        elif "/api/v1/series" in request.url and "metric=not_received" in request.url:
            backlog_fetches.append(request.url)
        elif "/api/v1/stream" in request.url:
            streams.append(request.headers.get("last-event-id"))

    page.on("request", count)
    chart = open_explorer(page, pipeline)
    live = page.get_by_role("status", name="Live updates")
    expect(live).to_have_text("● live: streaming")
    page.wait_for_function(BACKLOG_FETCHED)  # the strips fetch once seen
    first = int(chart.get_attribute("data-last-t") or 0)
    fetched, backlog = len(lag_fetches), len(backlog_fetches)
    assert fetched >= 1
    assert backlog >= 1
    # Three new right edges: a poll already in flight when the stream opened gives one at most.
    page.wait_for_function(NEW_EDGES, arg=first, timeout=45_000)
    assert len(lag_fetches) == fetched, lag_fetches
    assert len(backlog_fetches) == backlog, backlog_fetches
    assert len(streams) == 1
    # A hidden tab closes the stream; shown again, it resumes after the last event it had.
    page.evaluate(SET_HIDDEN, True)
    expect(live).to_have_text("❚❚ live: paused while the tab is hidden")
    page.evaluate(SET_HIDDEN, False)
    expect(live).to_have_text("● live: streaming")
    assert len(streams) == 2
    assert int(streams[1] or 0) > int(streams[0] or 0)
    # A fixed range has no stream and says so.
    page.get_by_role("button", name="zoom out").click()
    expect(live).to_have_text("❚❚ fixed range")


def test_a_firing_alert_is_a_band_on_the_lag_chart(
    page: Page, pipeline: Pipeline, api: ApiServer, lab: Lab, replica1
):
    from lagscope.alerts import rules as alert_rules
    from lagscope.models import AlertRule

    name = "band: SQL thread stopped"
    with api.sessions() as s, s.begin():
        rule_id = alert_rules.create_rule(
            s,
            {
                "name": name,
                "metric": "sql_stopped",
                "threshold": 0,
                "for_s": 2,
                "severity": "critical",
                "cluster_id": pipeline.cluster_id,
            },
        ).id
    chart = open_explorer(page, pipeline)
    alerts = page.get_by_role("list", name="Alerts firing in this range")
    item = alerts.locator("li", has_text=name)
    try:
        try:
            with replica1.cursor() as cur:
                cur.execute("STOP SLAVE SQL_THREAD")
            # Severity and rule in words, not only a colour.
            expect(item).to_contain_text(
                re.compile(rf"critical: {name} on replica1, firing since \d\d:\d\d:\d\d")
            )
            band = chart.locator('.chart-alert-band[data-severity="critical"]')
            expect(band.locator("title")).to_contain_text(f"critical: {name} on replica1")
            expect(band.locator("text")).to_have_text("⚠ critical")
            shot(page, "explorer-alert-band")
        finally:
            with replica1.cursor() as cur:
                cur.execute("START SLAVE SQL_THREAD")
        # Resolved: the band ends where the alert did.
        expect(item).to_contain_text(re.compile(r"fired \d\d:\d\d:\d\d–\d\d:\d\d:\d\d"))
    finally:
        with api.sessions() as s, s.begin():
            rule = s.get(AlertRule, rule_id)
            if rule is not None:
                alert_rules.delete_rule(s, rule)
    lab.wait_caught_up(timeout_s=60)


def test_the_side_panel_predicts_parallel_apply_from_the_sources_binlog(
    page: Page, pipeline: Pipeline, api: ApiServer
):
    """Two runs of the binlog sampler (the first marks, the second reads the window the
    heartbeat writer's commits filled): the side panel shows the simulated speed-ups."""
    assert pipeline.env is not None
    box = store_box(pipeline.sessions, PIPELINE_SECRET)
    assert sample_all(pipeline.sessions, box, None, time.time()) == 0
    wait_until(
        lambda: sample_all(pipeline.sessions, box, None, time.time()) == 1,
        timeout_s=30,
        interval_s=1,
        message="a window with transactions",
    )
    open_explorer(page, pipeline)
    section = page.get_by_test_id("parallelism")
    expect(section.get_by_role("heading", name="Parallel apply (predicted)")).to_be_visible()
    table = section.get_by_role("table", name="Predicted apply speed-up")
    expect(table.get_by_role("row")).to_have_count(6)  # the header and 1, 2, 4, 8, 16 workers
    expect(table.get_by_role("row").nth(1)).to_contain_text("1.0×")
    expect(section).to_contain_text("apply capacity with 4 workers (conservative)")
    cores = api.settings.replica_cores  # this machine's, where the lab's replicas run
    expect(section).to_contain_text(f"Capped by the replica's cores: on {cores} cores")
    expect(section).to_contain_text(re.compile(r"\d+ transactions? sampled"))
    shot(page, "explorer-parallelism")


# replica1 made slow the demo's way (phase A): every event and commit fsynced.
STRICT_FLUSH = {"sync_relay_log": 1, "sync_binlog": 1, "innodb_flush_log_at_trx_commit": 1}


def test_the_side_panel_predicts_relaxing_a_strict_replica_that_is_behind(
    page: Page, pipeline: Pipeline, api: ApiServer, lab: Lab, replica1
):
    """replica1 fsyncing every event and commit under a write load falls behind; its fsync cost
    (performance_schema, read while behind) and its applier's relay-log waits give the panel's
    "Relaxed flush (predicted)" line for replica1."""
    with replica1.cursor() as cur:
        names = ", ".join(f"@@global.{name}" for name in STRICT_FLUSH)
        cur.execute(f"SELECT {names}")
        before = dict(zip(STRICT_FLUSH, cur.fetchone(), strict=True))
        for name, value in STRICT_FLUSH.items():
            cur.execute(f"SET GLOBAL {name} = {int(value)}")
    load = WriteLoad(lambda: lab.connect("source"), threads=4, target_tps=2500)
    try:
        load.start()

        strict = [
            "innodb_flush_log_at_trx_commit 1 → 2",
            "sync_binlog 1 → 0",
            "sync_relay_log 1 → 0",
        ]

        def predicted() -> dict[str, Any] | None:
            # The parameters are read every few seconds: until then the old values show.
            # replica2 may show too, if the load puts it behind on a slow box.
            with api.client() as c:
                answer = c.get(f"/api/v1/clusters/{pipeline.cluster_id}/parallelism").json()
            mine = [d for d in answer["durability"] if d["instance"] == "replica1"]
            return mine[0] if mine and mine[0]["prediction"]["settings"] == strict else None

        # The panel prices the journal's before window of a step made now: the strict settings
        # are a step, so the window opens 30 s (the journal's settle time) after they were read.
        found = wait_until(
            predicted, timeout_s=120, interval_s=1, message="a relaxed-flush prediction"
        )
        open_explorer(page, pipeline)
        section = page.get_by_test_id("parallelism")
        line = section.locator('[data-testid="durability-now"][data-channel="replica1"]')
        expect(line).to_have_count(1)
        expect(line).to_contain_text("relaxing innodb_flush_log_at_trx_commit 1 → 2")
        expect(line).to_contain_text(re.compile(r"apply capacity|no prediction"))
        expect(section).to_contain_text("Relaxed flush trades durability")
        shot(page, "explorer-relaxed-flush")
        print(f"\nrelaxed flush now, replica1: {found['prediction']}")
    finally:
        load.stop()
        with replica1.cursor() as cur:
            for name, value in before.items():
                cur.execute(f"SET GLOBAL {name} = {int(value)}")
    lab.wait_caught_up(timeout_s=120)


def test_errant_transactions_show_on_the_side_panel_and_the_card(
    page: Page, pipeline: Pipeline, lab: Lab
):
    """A write on replica1 itself (in a GTID domain of its own, removed afterwards): the side
    panel names the GTID and what to do, the overview card counts it as a problem."""
    written = write_errant(lab)
    try:
        open_explorer(page, pipeline)
        status = page.get_by_role("region", name="status of replica1")
        expect(status.locator(".problem", has_text="errant trx")).to_contain_text(f"3: {written}")
        expect(status.get_by_test_id("side-errant")).to_contain_text("never fail over to replica1")
        expect(
            page.get_by_role("region", name="status of replica2").get_by_test_id("side-errant")
        ).to_have_count(0)
        shot(page, "explorer-errant")
        page.goto("/")
        row = page.locator('[data-instance="replica1"] tr[data-channel="replica1"]')
        expect(row.get_by_test_id("channel-errant")).to_have_text("⚠ 3 errant transactions")
        shot(page, "overview-errant")
    finally:
        remove_errant_domain(lab)
    lab.wait_caught_up(timeout_s=60)
