"""The Appliers page on the real lab: with slave_parallel_threads 0 replica1 shows one applier
(the SQL thread); after 0 → 4 under a write load its heatmap shows four workers, several of them
busy; the source's group-commit lanes are drawn. Screenshots of both states are kept.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from lagscope.demo.load import WriteLoad
from tests.integration.api_stack import ApiServer
from tests.integration.pipeline_stack import Pipeline
from tests.integration.waiting import wait_until

from .conftest import shot

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

_BUSY = re.compile(r"^(?P<row>.+?) · .*: (?P<pct>\d+) % busy$")


def set_parallel_threads(conn, threads: int) -> None:
    with conn.cursor() as cur:
        cur.execute("STOP SLAVE")
        cur.execute(f"SET GLOBAL slave_parallel_threads = {int(threads)}")
        cur.execute("START SLAVE")


def busy_rows(page: Page, replica: str) -> set[str]:
    """Row labels of replica's heatmap with at least one cell seen busy (from the cell titles)."""
    panel = page.get_by_role("article").filter(has_text=f"{replica}: are its workers used?")
    titles = panel.locator(".heatmap-cell").evaluate_all("cells => cells.map(c => c.title)")
    rows = set()
    for title in titles:
        match = _BUSY.match(title)
        if match and int(match["pct"]) > 0:
            rows.add(match["row"])
    return rows


def test_heatmap_shows_more_busy_workers_after_0_to_4(
    lab, pipeline: Pipeline, api: ApiServer, page: Page
):
    replica = lab.connect("replica1")
    load = WriteLoad(lambda: lab.connect("source"), threads=6, target_tps=2500)
    try:
        set_parallel_threads(replica, 0)
        load.start()
        page.goto(f"/clusters/{pipeline.cluster_id}/workers")
        panel = page.get_by_role("article").filter(has_text="replica1: are its workers used?")
        expect(panel.get_by_text("0 configured (slave_parallel_threads)")).to_be_visible()
        wait_until(
            lambda: busy_rows(page, "replica1") == {"SQL thread"},
            timeout_s=90,
            interval_s=1,
            message="replica1's SQL thread seen busy, the one applier",
        )
        expect(page.get_by_text("Group commit on the source")).to_be_visible()
        serial = shot(page, "appliers-serial")
        set_parallel_threads(replica, 4)
        expect(panel.get_by_text("4 configured (slave_parallel_threads)")).to_be_visible()
        busy = wait_until(
            lambda: len(rows := busy_rows(page, "replica1") - {"SQL thread"}) >= 2 and rows,
            timeout_s=120,
            interval_s=1,
            message="at least two of replica1's four workers seen busy on the page",
        )
        expect(panel.get_by_text("worker 4", exact=True)).to_be_visible()
        parallel = shot(page, "appliers-parallel")
        pipeline.assert_alive()
    finally:
        load.stop()
        set_parallel_threads(replica, 0)
        replica.close()
    print(f"\nbusy rows after 0 -> 4: {sorted(busy)}; screenshots {serial} {parallel}")
    lab.wait_caught_up(timeout_s=120)
