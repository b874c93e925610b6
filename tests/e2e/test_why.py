"""Why is it behind, in Chromium over the real pipeline: a session on replica1 holds row locks the
applier needs (lab/incidents/'s ``row_lock``). While it holds them, the overview card names the
cause in words and the explorer's why strip shows a segment whose evidence names the session the
test opened; once undone and caught up for the (shortened) hold, the Episodes list shows the
ended episode with its main cause and the episode page shows the blocking session and the table
as text. And the alert it fires reaches the demo's built-in webhook inbox with
the cause in its payload's "why".

The module runs as the demo does (LAGSCOPE_DEMO=1, the placeholder key, a store marked as the
demo's), so the API has the inbox and the worker's delivery to it is signed with a secret the
inbox can check. One incident for the whole module (making it and undoing it costs ~10 s): the
tests read the same episode in order, each step's screenshot in /tmp/e2e-why and
tests/e2e/artifacts.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect
from sqlalchemy import select

from lagscope.alerts.rules import create_rule
from lagscope.alerts.targets import create_target
from lagscope.config import PLACEHOLDER_SECRET
from lagscope.demo.alerting import INBOX_TARGET, inbox_url
from lagscope.lab import Lab, incidents
from lagscope.models import DemoStore
from lagscope.models.episodes import Episode
from lagscope.security.demo_store import MARK_ROW_ID
from lagscope.security.secret_box import store_box
from tests.integration.api_stack import ApiServer, api_server
from tests.integration.pipeline_stack import Pipeline, start_pipeline
from tests.integration.waiting import wait_until

from .conftest import ARTIFACTS, DIST

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

SHOTS = Path("/tmp/e2e-why")
# The episode ends once replica1 has been caught up this long (30 s in production).
HOLD_S = 4
TABLE = "e2e_rows_held"
LOOPBACK = "127.0.0.1"
RULE = "e2e: replica lag over 5 s"


@pytest.fixture(scope="module")
def pipeline(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    env = {
        "LAGSCOPE_DEMO": "1",
        "LAGSCOPE_EPISODE_CAUGHT_UP_S": str(HOLD_S),
        "LAGSCOPE_WEBHOOK_ALLOWED_HOSTS": LOOPBACK,
        "LAGSCOPE_WEBHOOK_BACKOFF_BASE_S": "1",
        "LAGSCOPE_DELIVERY_SWEEP_EVERY_S": "2",
    }
    workdir = tmp_path_factory.mktemp("e2e-why")
    with start_pipeline(lab, workdir, secret=PLACEHOLDER_SECRET, extra_env=env) as started:
        # What `lagscope demo` writes into the store it made (mark_demo_store refuses a store
        # that already has a cluster, and start_pipeline made one): demo mode runs only here.
        with started.session() as s, s.begin():
            s.add(DemoStore(id=MARK_ROW_ID, created_at=datetime.now(UTC)))
        yield started


@pytest.fixture(scope="module")
def api(pipeline: Pipeline) -> Iterator[ApiServer]:
    with api_server(
        pipeline.url, demo=True, ui_dist=str(DIST), webhook_allowed_hosts=LOOPBACK
    ) as server:
        port = urlsplit(server.url).port
        assert port is not None
        # The demo's target (its own inbox), and a rule like the demo's lag rule, shorter: the
        # incident is held for seconds, not the demo's 30 s over 30 s.
        with pipeline.session() as s, s.begin():
            box = store_box(pipeline.sessions, PLACEHOLDER_SECRET)
            target = create_target(
                s,
                box,
                [LOOPBACK],
                INBOX_TARGET,
                "generic",
                inbox_url(LOOPBACK, port),
                secrets.token_urlsafe(24),
            )
            create_rule(
                s,
                {
                    "name": RULE,
                    "metric": "lag",
                    "threshold": 5.0,
                    "for_s": 2.0,
                    "resolve_threshold": 2.0,
                    "cluster_id": pipeline.cluster_id,
                    "severity": "warning",
                    "target_ids": [target.id],
                },
            )
        yield server


class Held:
    """The incident while it lasts; ``undo`` ends it (and waits until the lab has caught up)."""

    def __init__(self, lab: Lab) -> None:
        self._manager = incidents.row_lock(lab, replica="replica1", table=TABLE)
        self.made = self._manager.__enter__()
        self._open = True

    def undo(self) -> None:
        if self._open:
            self._open = False
            self._manager.__exit__(None, None, None)


@pytest.fixture(scope="module")
def held(lab: Lab, pipeline: Pipeline) -> Iterator[Held]:
    # The pipeline must be polling before the incident: the cause is named from live readings.
    wait_until(lambda: pipeline.channel_id("replica1"), timeout_s=60, message="replica1's channel")
    incident = Held(lab)
    try:
        yield incident
    finally:
        incident.undo()


def save(page: Page, name: str, full_page: bool = True) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    # The live explorer keeps redrawing its charts: a full-page capture of it (viewport resized
    # to the page's height, charts re-laid out) took 30 s on a busy box. Its viewport shows the
    # chart, the strips and the evidence.
    page.screenshot(path=str(path), full_page=full_page)
    (ARTIFACTS / f"why-{name}.png").parent.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"why-{name}.png").write_bytes(path.read_bytes())


def test_the_overview_card_names_the_blocking_session_as_the_cause(
    page: Page, pipeline: Pipeline, held: Held
) -> None:
    assert held.made.cause == "blocked_by_session" and held.made.session_id
    page.goto("/")
    card = page.get_by_role("article", name="lab")
    row = card.locator('[data-instance="replica1"] tr[data-channel="replica1"]')
    cause = row.get_by_test_id("channel-cause")
    expect(cause).to_have_attribute("data-cause", "blocked_by_session")
    expect(cause).to_contain_text(re.compile(r"why: \S"))
    # The far replica is not blocked: no such cause on its row.
    other = card.locator('[data-instance="replica2"] tr[data-channel="replica2"]')
    expect(other.locator('[data-cause="blocked_by_session"]')).to_have_count(0)
    save(page, "1-overview")


def test_the_why_strip_shows_the_segment_and_its_evidence_names_the_session(
    page: Page, pipeline: Pipeline, held: Held
) -> None:
    page.goto(f"/clusters/{pipeline.cluster_id}?range=15m")
    strips = page.get_by_test_id("why-strips")
    strip = strips.locator('[data-testid="why-strip"][data-channel="replica1"]')
    segment = strip.locator('[data-testid="why-segment"][data-cause="blocked_by_session"]').last
    expect(segment).to_be_visible()
    expect(segment).to_have_accessible_name(re.compile(r"^blocked by a session"))
    # Seconds old in a 15-minute range: a sliver, with its words beside it.
    expect(strip.locator(".why-beside")).to_have_text(segment.text_content() or "")
    save(page, "2-explorer", full_page=False)
    segment.hover()
    detail = strips.get_by_test_id("why-detail")
    expect(detail).to_contain_text(f"session {held.made.session_id}")
    # The evidence in words (as on the episode page), not the finding's keys.
    expect(detail.locator('[data-key="blocker_thread_id"]')).to_have_text(
        f"session id{held.made.session_id}"
    )
    expect(detail.locator('[data-key="blocker_object"] dd')).to_have_text(
        f"{held.made.schema}.{TABLE}"
    )
    save(page, "3-why-detail-hover", full_page=False)
    strips.screenshot(path=str(SHOTS / "3b-why-strips.png"))
    # Keyboard: focusing the segment shows the same evidence.
    page.mouse.move(0, 0)
    expect(detail).not_to_contain_text(f"session {held.made.session_id}")
    segment.focus()
    expect(detail).to_contain_text(f"session {held.made.session_id}")


def test_the_demo_inbox_shows_the_alert_it_fired_with_the_why(page: Page, held: Held) -> None:
    """Still held: replica1's lag passed the rule's 5 s for 2 s, the worker delivered the alert
    to the inbox, and its "why" names the session the test opened."""
    page.goto("/inbox")
    entries = page.get_by_role("list", name="Received alerts").locator(":scope > li")
    firing = entries.filter(has_text=RULE).filter(has_text="firing").first
    # The alert leads with its episode's main cause; the why of its last poll follows.
    expect(firing).to_contain_text("Why, at the last poll:")
    why = firing.locator(".inbox-why")
    expect(why).to_contain_text("blocked by a session on the replica: ")
    expect(why).to_contain_text(f"session {held.made.session_id}")
    expect(why).to_contain_text("What to do: Ask the owner of session")
    expect(firing).to_contain_text("signature valid")
    payload = firing.locator("pre.inbox-payload")
    expect(payload).to_be_visible()  # the newest firing one is open
    expect(payload).to_contain_text('"cause": "blocked_by_session"')
    expect(payload).to_contain_text(f"{held.made.schema}.{TABLE}")
    save(page, "4-inbox")


def ended_episode(pipeline: Pipeline, channel_id: int) -> Episode | None:
    with pipeline.session() as s:
        return s.scalars(
            select(Episode)
            .where(Episode.channel_id == channel_id, Episode.ended_at.is_not(None))
            .order_by(Episode.id.desc())
        ).first()


def test_after_the_incident_the_episode_is_listed_and_its_page_shows_the_evidence(
    page: Page, pipeline: Pipeline, held: Held
) -> None:
    session_id = held.made.session_id
    held.undo()
    channel_id = pipeline.channel_id("replica1")
    assert channel_id is not None
    episode: Any = wait_until(
        lambda: ended_episode(pipeline, channel_id),
        timeout_s=90,
        message="replica1's episode to end after the incident",
    )

    page.goto(f"/clusters/{pipeline.cluster_id}")
    page.get_by_role("navigation", name="Cluster views").get_by_role(
        "link", name="Episodes", exact=True
    ).click()
    table = page.get_by_role("table", name="Lag episodes")
    expect(table).to_have_attribute("data-testid", "episodes-table")
    row = table.locator(f'[data-testid="episode-row"][data-episode-id="{episode.id}"]')
    expect(row).to_contain_text("replica1")
    expect(row.get_by_test_id("episode-cause")).to_have_text(re.compile(r"\S"))
    expect(row.get_by_test_id("episode-ended")).not_to_contain_text("ongoing")
    save(page, "5-episodes")
    cause_words = row.get_by_test_id("episode-cause").text_content()

    row.get_by_role("link").first.click()
    episode_page = page.get_by_test_id("episode-page")
    expect(episode_page).to_have_attribute("data-episode-id", str(episode.id))
    expect(page.get_by_test_id("episode-main-cause")).to_have_text(cause_words or "")
    expect(page.get_by_test_id("episode-ended")).not_to_contain_text("ongoing")
    section = page.locator('[data-testid="evidence-section"][data-cause="blocked_by_session"]')
    expect(section).to_be_visible()
    session = section.get_by_test_id("evidence-session").first
    expect(session.locator('tr[data-key="blocker_thread_id"] td')).to_have_text(str(session_id))
    expect(session.locator('tr[data-key="blocker_object"] td')).to_have_text(
        f"{held.made.schema}.{TABLE}"
    )
    # Server text is text: no element was made from it.
    expect(section.locator("td script, td img")).to_have_count(0)
    expect(page.get_by_test_id("episode-actions")).to_contain_text(f"session {session_id}")
    # Where the operator decides: what more workers would do (no binlog window sampled in
    # this module: the section says so, and says whether cores cap it; none configured here).
    parallel = page.get_by_test_id("parallelism")
    expect(parallel.get_by_role("heading", name="Parallel apply (predicted)")).to_be_visible()
    expect(parallel).to_contain_text("capped by the replica's cores", ignore_case=True)
    save(page, "6-episode-page")
