"""The tuning journal and compare pages over a real tuning story.

Once per module, on the real lab under load: replica1 starts strict (every flush and sync at 1,
serial apply), then three steps are made with SET GLOBAL while the load runs — relaxed redo
flush, relaxed binlog/relay-log syncs, parallel apply (0 → 4 threads). The pages must show the
steps in order with the verdicts the API gives, export a CSV that says what the page says, open
the explorer on a step's windows, and compare the two replicas. The API's journal of the same
story is checked against the stored samples here too (one story, not one per test module).

Phases end on a state (the pipeline has stored a sample past the step's after window), never on
a fixed sleep; deadlines are generous for a 2-core box shared by many test runs.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from playwright.sync_api import Page, expect

from lagscope.demo.load import WriteLoad
from lagscope.ingest.commit_samples import sample_all
from lagscope.security.secret_box import store_box
from tests.integration.api_stack import ApiServer
from tests.integration.pipeline_stack import SECRET as PIPELINE_SECRET
from tests.integration.pipeline_stack import Pipeline, now
from tests.integration.test_api_journal import MIN_SAMPLES, SETTLE_S, WIDTH_S, check_journal
from tests.integration.waiting import wait_until

from .conftest import shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

STRICT = {
    "sync_relay_log": 1,
    "sync_master_info": 1,
    "innodb_flush_log_at_trx_commit": 1,
    "sync_binlog": 1,
}
DEFAULTS = {
    "sync_relay_log": 10000,
    "sync_master_info": 10000,
    "innodb_flush_log_at_trx_commit": 1,
    "sync_binlog": 0,
}
VERDICT_LABELS = {
    "improved": "improved",
    "worse": "worse",
    "no_clear_change": "no clear change",
    "insufficient_data": "insufficient data",
    "not_measurable": "not measurable",
}
FIGURES = [  # (data-figure, CSV stem, unit) in the page's column order
    ("lagP50", "lag_p50", "s", "s"),
    ("lagP95", "lag_p95", "s", "s"),
    ("lagMax", "lag_max", "s", "s"),
    ("caughtUp", "caught_up", "pct", "%"),
    ("applyRate", "apply_rate", "trx_s", "trx/s"),
    ("sourceRate", "source_rate", "trx_s", "trx/s"),
]


@dataclass
class Story:
    cluster_id: int
    start: datetime
    end: datetime
    steps: list[set[str]]
    began: datetime  # before the strict SETs
    set_at: list[datetime]  # when each step's SETs were sent

    def query(self) -> dict[str, Any]:
        return {
            "from": self.start.isoformat(),
            "to": self.end.isoformat(),
            "width": WIDTH_S,
            "settle": SETTLE_S,
            "min_samples": MIN_SAMPLES,
        }


def set_globals(conn, values: dict[str, int]) -> None:
    with conn.cursor() as cur:
        for name, value in values.items():
            cur.execute(f"SET GLOBAL {name} = {int(value)}")


def set_parallel_threads(conn, threads: int) -> None:
    """slave_parallel_threads only changes while the replica threads are stopped."""
    with conn.cursor() as cur:
        cur.execute("STOP SLAVE")
        cur.execute(f"SET GLOBAL slave_parallel_threads = {int(threads)}")
        cur.execute("START SLAVE")


def detected(api: ApiServer, cluster_id: int, since: datetime, names: set[str]) -> datetime:
    """When the pipeline saw all of ``names`` change on replica1 (the latest first_new_at)."""

    def seen() -> datetime | None:
        with api.client() as c:
            changes = c.get(
                f"/api/v1/clusters/{cluster_id}/param-changes",
                params={"start": since.isoformat(), "end": (now() + timedelta(1)).isoformat()},
            ).json()
        found = [x for x in changes if x["instance_name"] == "replica1" and x["name"] in names]
        if {x["name"] for x in found} >= names:
            return max(datetime.fromisoformat(x["first_new_at"]) for x in found)
        return None

    return wait_until(seen, timeout_s=60, interval_s=0.5, message=f"param changes {names}")


def stored_past(pipeline: Pipeline, moment: datetime) -> bool:
    """Both replicas have a sample at or after ``moment``: a window ending there is complete."""
    return all(
        (row := pipeline.latest(name)) is not None and row.ts >= moment
        for name in ("replica1", "replica2")
    )


def run_phase_past(pipeline: Pipeline, moment: datetime) -> None:
    wait_until(
        lambda: stored_past(pipeline, moment),
        timeout_s=(moment - now()).total_seconds() + 90,
        interval_s=0.5,
        message=f"samples of both replicas past {moment:%H:%M:%S}",
    )


@pytest.fixture(scope="module")
def story(lab, pipeline: Pipeline, api: ApiServer) -> Iterator[Story]:
    replica = lab.connect("replica1")
    # 2500 trx/s: more than replica1 receives and applies with per-event fsyncs and one applier.
    load = WriteLoad(lambda: lab.connect("source"), threads=6, target_tps=2500)
    began = now()
    steps: list[set[str]] = []
    try:
        with replica.cursor() as cur:
            cur.execute("SELECT @@global.slave_parallel_threads")
            (threads,) = cur.fetchone()
        if threads:
            set_parallel_threads(replica, 0)
        set_globals(replica, STRICT)
        # The source's binlog, as the beat job samples it every 5 min (here: now and once the
        # load runs): the parallel step's prediction comes from it.
        box = store_box(pipeline.sessions, PIPELINE_SECRET)
        sample_all(pipeline.sessions, box, None, now().timestamp())
        load.start()
        wait_until(
            lambda: sample_all(pipeline.sessions, box, None, now().timestamp()) == 1,
            timeout_s=30,
            interval_s=1,
            message="a binlog window under the load",
        )
        strict = {"sync_relay_log", "sync_master_info"}
        strict_at = detected(api, pipeline.cluster_id, began, strict)
        run_phase_past(pipeline, strict_at + timedelta(seconds=WIDTH_S + SETTLE_S + 3))
        phases = (
            (
                {"innodb_flush_log_at_trx_commit"},
                lambda: set_globals(replica, {"innodb_flush_log_at_trx_commit": 2}),
            ),
            (
                {"sync_binlog", "sync_relay_log", "sync_master_info"},
                lambda: set_globals(
                    replica, {"sync_binlog": 0, "sync_relay_log": 10000, "sync_master_info": 10000}
                ),
            ),
            ({"slave_parallel_threads"}, lambda: set_parallel_threads(replica, 4)),
        )
        first_set = None
        sent: list[datetime] = []
        for names, act in phases:
            set_at = now()
            first_set = first_set or set_at
            act()
            at = detected(api, pipeline.cluster_id, set_at, names)
            steps.append(names)
            sent.append(set_at)
            run_phase_past(pipeline, at + timedelta(seconds=SETTLE_S + WIDTH_S + 3))
        pipeline.assert_alive()
        end = now()
    finally:
        load.stop()
        set_globals(replica, DEFAULTS)
        set_parallel_threads(replica, 0)
        replica.close()
    assert first_set is not None
    yield Story(pipeline.cluster_id, first_set - timedelta(seconds=1), end, steps, began, sent)
    # The far replica applies serially and ends minutes behind on a busy box: four workers let
    # it catch up for the next module, then it gets its serial applier back.
    far = lab.connect("replica2")
    with far.cursor() as cur:
        cur.execute("SELECT @@global.slave_parallel_threads")
        (serial,) = cur.fetchone()
    try:
        set_parallel_threads(far, 4)
        lab.wait_caught_up(timeout_s=300)
    finally:
        set_parallel_threads(far, serial)
        far.close()


def api_journal(api: ApiServer, story: Story) -> dict[str, Any]:
    with api.client() as c:
        response = c.get(
            f"/api/v1/clusters/{story.cluster_id}/journal",
            params={
                "start": story.start.isoformat(),
                "end": story.end.isoformat(),
                "width_s": WIDTH_S,
                "settle_s": SETTLE_S,
                "min_samples": MIN_SAMPLES,
            },
        )
    assert response.status_code == 200, response.text
    return response.json()


def open_journal(page: Page, story: Story) -> None:
    page.goto(f"/clusters/{story.cluster_id}/journal?{urlencode(story.query())}")
    expect(page.get_by_role("table", name="Tuning journal")).to_be_visible()
    expect(page.locator("tbody.journal-step")).to_have_count(len(story.steps))


def test_the_journals_figures_are_the_stored_samples(pipeline: Pipeline, story: Story):
    """The API's journal of this story, step by step: its windows, and each window's figures
    recomputed from the samples the pipeline stored (tests/integration/test_api_journal)."""
    check_journal(
        pipeline, story.began, list(zip(story.set_at, story.steps, strict=True)), story.end
    )


def test_journal_lists_the_steps_in_order_with_their_verdicts(
    page: Page, api: ApiServer, story: Story
):
    open_journal(page, story)
    journal = api_journal(api, story)
    assert [{c["name"] for c in s["changes"]} for s in journal["steps"]] == story.steps
    table = page.get_by_role("table", name="Tuning journal")
    expected_what = [
        "innodb_flush_log_at_trx_commit 1 → 2",
        "sync_binlog 1 → 0",
        "slave_parallel_threads 0 → 4",
    ]
    for number, (step, what) in enumerate(zip(journal["steps"], expected_what, strict=True), 1):
        group = table.locator(f'tbody[data-step="{number}"]')
        expect(group.locator(".step-what")).to_contain_text(f"replica1: {what}")
        for impact in step["impacts"]:
            name = impact["channel"]["instance_name"]
            row = group.locator(f'tr[data-replica="{name}"]')
            label = VERDICT_LABELS[impact["impact"]["verdict"]]
            expect(row.locator(".verdict")).to_have_text(re.compile(rf"{re.escape(label)}$"))
            expect(row.locator(".reason")).to_have_text(impact["impact"]["reason"])
            if name == "replica1":
                assert impact["in_scope"], step["summary"]
                assert impact["impact"]["verdict"] != "insufficient_data", impact
            else:  # replica2 was not touched: a control
                expect(row.locator(".replica")).to_contain_text("control")
    # The chart of p95 per step: a bar group per step plus the baseline.
    chart = page.get_by_role("figure", name=re.compile("p95 lag per replica after each step"))
    expect(chart.locator(".recharts-bar-rectangle").first).to_be_visible()
    expect(chart.locator(".recharts-xAxis .recharts-cartesian-axis-tick")).to_have_count(
        len(story.steps) + 1
    )
    # The parallel step: replica1's capacity predicted from the source's binlog and measured.
    parallel = journal["steps"][2]
    (mine,) = [i for i in parallel["impacts"] if i["channel"]["instance_name"] == "replica1"]
    prediction = mine["prediction"]
    assert prediction is not None and prediction["workers_after"] == 4, mine
    assert prediction["cores"] == api.settings.replica_cores
    shown = table.locator('tbody[data-step="3"] [data-testid="journal-prediction"]')
    expect(shown).to_contain_text("1 → 4 workers")
    expect(shown).to_contain_text("measured")
    print(
        f"\nparallel step, replica1: predicted {prediction['predicted']} trx/s"
        f" (x{prediction['factor']:.2f}; the stream allows x{prediction['stream_allows']:.2f}),"
        f" measured {prediction['measured']} trx/s, error {prediction['error']}"
    )
    # The flush steps: replica1's capacity predicted from its measured fsync cost (the lab runs
    # performance_schema's file instruments) and measured after; none for the control.
    for number, settings in (
        (1, ["innodb_flush_log_at_trx_commit 1 → 2"]),
        (2, ["sync_binlog 1 → 0", "sync_relay_log 1 → 10000"]),
    ):
        step = journal["steps"][number - 1]
        by_name = {i["channel"]["instance_name"]: i for i in step["impacts"]}
        assert by_name["replica2"]["durability"] is None
        flush = by_name["replica1"]["durability"]
        assert flush is not None and flush["settings"] == settings, flush
        shown = table.locator(f'tbody[data-step="{number}"] [data-testid="journal-durability"]')
        expect(shown).to_contain_text(settings[0])
        expect(shown).to_contain_text("measured")
        print(
            f"\nflush step {number}, replica1: {flush['applier_s_per_trx']} s/trx, removes"
            f" {flush['removed']}: predicted {flush['predicted']} trx/s, measured"
            f" {flush['measured']} trx/s, error {flush['error']}, unknown {flush['unknown']}"
        )
    assert all(i["durability"] is None for i in parallel["impacts"])
    shot(page, "journal")
    print("\njournal (API):")
    for number, step in enumerate(journal["steps"], 1):
        for impact in step["impacts"]:
            b, a = impact["before"], impact["after"]
            print(
                f"  {number} {impact['channel']['instance_name']:<8} p95 {b['lag_p95']} → "
                f"{a['lag_p95']} s  {impact['impact']['verdict']}: {impact['impact']['reason']}"
            )


def seconds(value: float) -> str:
    """The journal's rounding of seconds (frontend/src/viewmodels/journal.ts roundSeconds)."""
    return f"{value:.{2 if abs(value) < 1 else 1 if abs(value) < 100 else 0}f}"


def page_pair(before: str, after: str, unit: str) -> str:
    if not before and not after:
        return "—"
    return f"{before or '—'} → {after or '—'} {unit}"


def test_csv_export_downloads_and_matches_the_page(page: Page, story: Story):
    open_journal(page, story)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV").click()
    download = info.value
    assert re.fullmatch(r"lagscope-journal-lab-.+\.csv", download.suggested_filename)
    rows = list(csv.DictReader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
    table = page.get_by_role("table", name="Tuning journal")
    assert len(rows) == table.locator("tbody tr").count() == 2 * len(story.steps)
    for row in rows:
        line = table.locator(f'tr[data-step="{row["step"]}"][data-replica="{row["replica"]}"]')
        expect(line).to_have_count(1)
        for key, stem, csv_unit, unit in FIGURES:
            before, after = row[f"{stem}_before_{csv_unit}"], row[f"{stem}_after_{csv_unit}"]
            expect(line.locator(f'[data-figure="{key}"]')).to_have_text(
                page_pair(before, after, unit)
            )
        expect(line.locator(".verdict")).to_contain_text(row["verdict"])
        expect(line.locator(".reason")).to_have_text(row["reason"])
        group = table.locator(f'tbody[data-step="{row["step"]}"] .step-what li')
        assert "; ".join(group.all_inner_texts()) == row["what_changed"]
    with page.expect_download() as info:
        page.get_by_role("button", name="Download Markdown").click()
    markdown = Path(info.value.path()).read_text(encoding="utf-8")
    assert "| step | when | what changed | replica1 (near) lag p95 | replica2 (far) lag p95 |" in (
        markdown
    )
    assert len([x for x in markdown.splitlines() if re.match(r"\| \d+ \|", x)]) == len(story.steps)


def test_a_step_opens_the_explorer_on_its_windows(page: Page, api: ApiServer, story: Story):
    open_journal(page, story)
    step = api_journal(api, story)["steps"][1]
    page.get_by_role("link", name="open step 2 in the explorer").click()
    expect(page).to_have_url(re.compile(rf"/clusters/{story.cluster_id}\?from="))
    query = parse_qs(urlparse(page.url).query)
    frm = datetime.fromisoformat(query["from"][0].replace("Z", "+00:00"))
    to = datetime.fromisoformat(query["to"][0].replace("Z", "+00:00"))
    before = datetime.fromisoformat(step["before"]["start"])
    after = datetime.fromisoformat(step["after"]["end"])
    # The windows plus 5 s of context each side (ms precision in the URL).
    assert abs((before - frm).total_seconds() - 5) < 0.002
    assert abs((to - after).total_seconds() - 5) < 0.002


def test_compare_two_replicas_shows_both(page: Page, pipeline: Pipeline, story: Story):
    params = {
        "channel": pipeline.channel_id("replica1"),
        "other": pipeline.channel_id("replica2"),
        "from": story.start.isoformat(),
        "to": story.end.isoformat(),
    }
    page.goto(f"/clusters/{story.cluster_id}/compare?{urlencode(params)}")
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict.locator('li[data-side="a"]')).to_contain_text("replica1")
    expect(verdict.locator('li[data-side="b"]')).to_contain_text("replica2")
    expect(verdict.locator(".sentence")).to_contain_text("replica")
    chart = page.get_by_role("figure", name="Lag of both replicas on one clock")
    expect(chart.locator("path.recharts-line-curve")).to_have_count(2)
    stats = page.get_by_role("table", name="Statistics side by side")
    expect(stats.locator("thead")).to_contain_text("a · replica1")
    expect(stats.locator("thead")).to_contain_text("b · replica2")
    expect(stats.get_by_role("row", name=re.compile("^lag p95"))).to_contain_text(" s")
    shot(page, "compare-replicas")


def test_compare_before_after_from_the_journal(page: Page, api: ApiServer, story: Story):
    open_journal(page, story)
    step = api_journal(api, story)["steps"][2]
    expected = next(i for i in step["impacts"] if i["channel"]["instance_name"] == "replica1")
    page.get_by_role("link", name="compare replica1 before and after step 3").click()
    expect(page).to_have_url(re.compile(rf"/clusters/{story.cluster_id}/compare\?channel="))
    verdict = page.get_by_role("region", name="Verdict")
    # The compare API judges the two windows on its own (no settle, no neighbouring steps), so
    # its verdict may differ from the journal's; the windows' figures may not.
    expect(verdict.locator(".verdict")).to_have_text(re.compile("|".join(VERDICT_LABELS.values())))
    p95 = page.get_by_role("table", name="Statistics side by side").get_by_role(
        "row", name=re.compile("^lag p95")
    )
    before, after = expected["before"]["lag_p95"], expected["after"]["lag_p95"]
    expect(p95.locator("td").nth(0)).to_have_text(f"{seconds(before)} s")
    expect(p95.locator("td").nth(1)).to_have_text(f"{seconds(after)} s")
    chart = page.get_by_role("figure", name=re.compile("window a \\(baseline, dashed\\)"))
    expect(chart.locator("path.recharts-line-curve")).to_have_count(2)
    shot(page, "compare-before-after")


def test_explorer_compare_with_opens_both_replicas(page: Page, story: Story):
    window = {"from": story.start.isoformat(), "to": story.end.isoformat()}
    page.goto(f"/clusters/{story.cluster_id}?{urlencode(window)}")
    page.get_by_role("link", name="compare with…").click()
    expect(page).to_have_url(
        re.compile(rf"/clusters/{story.cluster_id}/compare\?channel=\d+&from=")
    )
    verdict = page.get_by_role("region", name="Verdict")
    expect(verdict.locator('li[data-side="a"]')).to_contain_text("replica1")
    expect(verdict.locator('li[data-side="b"]')).to_contain_text("replica2")
