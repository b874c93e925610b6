"""Pictures and reports to share, in Chromium over the real pipeline: the
explorer's lag chart and an episode page downloaded as PNG (a real PNG, wider and taller than
300 px), the episode as a Markdown report naming its main cause and as an HTML report with the
chart embedded, each file named after the replicas and the time range in UTC. The episode's
server text is hostile (conftest.HOSTILE): the reports show it as text, and opening the HTML
report runs nothing.

One context for the module (conftest's module_page), an episode written into the store
(conftest's stored_episode). The downloads are kept in $E2E_SCREENSHOT_DIR (default: a pytest
temporary directory; conftest's ``shots``).
"""

from __future__ import annotations

import base64
import re
import struct
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Download, Page, expect

from tests.integration.pipeline_stack import Pipeline

from .conftest import HOSTILE, StoredEpisode

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MINUTE = r"\d{4}-\d\d-\d\dT\d{4}Z"


def saved(download: Download, shots: Path) -> Path:
    """The downloaded file, kept under its own name beside the screenshots for a person to open."""
    assert download.path() is not None, f"{download.suggested_filename}: {download.failure()}"
    path = shots / download.suggested_filename
    download.save_as(path)
    return path


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's header (its first chunk, IHDR)."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"{path.name} is not a PNG: {head[:8]!r}"
    assert head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


# In a blank page of the browser: the picture decoded, one pixel read back (RGBA).
READ_PIXEL = """
async ([b64, x, y]) => {
  const img = new Image();
  img.src = "data:image/png;base64," + b64;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const g = canvas.getContext("2d");
  g.drawImage(img, 0, 0);
  return [...g.getImageData(x, y, 1, 1).data];
}
"""


def corner_luminance(page: Page, path: Path) -> float:
    """How light the picture's top-left corner is (its margin: the backdrop the page had), 0–1."""
    blank = page.context.new_page()
    try:
        r, g, b, _ = blank.evaluate(
            READ_PIXEL, [base64.b64encode(path.read_bytes()).decode(), 4, 4]
        )
    finally:
        blank.close()
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def utc_minute(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H%MZ")


def covering_range(start: datetime, end: datetime) -> str:
    """As the UI names a range: its start rounded down to the minute, its end up."""
    floor = start.replace(second=0, microsecond=0)
    ceil = end.replace(second=0, microsecond=0)
    if ceil < end:
        ceil += timedelta(minutes=1)
    return f"{utc_minute(floor)}–{utc_minute(ceil)}"


def download(page: Page, test_id: str) -> Download:
    with page.expect_download() as started:
        page.get_by_test_id(test_id).click()
    return started.value


def test_the_explorer_chart_downloads_as_a_png_named_after_replicas_and_range(
    module_page: Page, pipeline: Pipeline, shots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with capsys.disabled():
        print(f"\nexported files: {shots}")
    page = module_page
    # In the dark theme: the picture is the chart as the page shows it.
    page.emulate_media(color_scheme="dark")
    page.goto(f"/clusters/{pipeline.cluster_id}?range=15m")
    chart = page.get_by_test_id("lag-chart")
    expect(chart.locator(".recharts-line-curve")).to_have_count(2)
    # The file name takes the replicas from the picker: exported before it has loaded, the
    # name says no-replica (seen once in CI).
    for replica in ("replica1", "replica2"):
        expect(page.get_by_role("checkbox", name=re.compile(replica))).to_be_checked()

    got = download(page, "export-lag-png")
    name = got.suggested_filename
    found = re.fullmatch(rf"lagscope-lag-lab-replica1\+replica2-({MINUTE})–({MINUTE})\.png", name)
    assert found, name
    start, end = (
        datetime.strptime(s, "%Y-%m-%dT%H%MZ").replace(tzinfo=UTC) for s in found.groups()
    )
    # The last 15 minutes, to whole minutes around them.
    assert timedelta(minutes=15) <= end - start <= timedelta(minutes=17), name
    assert abs(end - datetime.now(UTC)) < timedelta(minutes=3), name
    path = saved(got, shots)
    width, height = png_size(path)
    assert width > 300 and height > 300, (width, height)
    assert corner_luminance(page, path) < 0.25  # the dark theme's panel


def test_an_episode_downloads_as_a_png_and_as_reports_that_show_server_text_as_text(
    module_page: Page, pipeline: Pipeline, stored_episode: StoredEpisode, shots: Path
) -> None:
    page = module_page
    page.emulate_media(color_scheme="light")
    page.goto(f"/clusters/{pipeline.cluster_id}/episodes/{stored_episode.id}")
    main_cause = page.get_by_test_id("episode-main-cause")
    expect(main_cause).to_have_text("blocked by a session on the replica")
    expect(page.get_by_test_id("lag-chart").locator(".recharts-line-curve").first).to_be_attached()
    cause = main_cause.text_content() or ""
    stem = (
        f"lagscope-episode-{stored_episode.id}-lab-replica1-"
        f"{covering_range(stored_episode.started_at, stored_episode.ended_at)}"
    )

    picture = download(page, "export-episode-png")
    assert picture.suggested_filename == f"{stem}.png"
    path = saved(picture, shots)
    width, height = png_size(path)
    assert width > 300 and height > 300, (width, height)
    assert corner_luminance(page, path) > 0.9  # the light theme's page background

    markdown = download(page, "export-episode-md")
    assert markdown.suggested_filename == f"{stem}.md"
    md = saved(markdown, shots).read_text(encoding="utf-8")
    assert md.startswith("# Lag episode: replica1 behind from ")
    assert f"| **Main cause** | {cause} |" in md
    assert f"### 2. {cause}" in md
    assert f"![Lag of replica1 over the episode, with its causes](<{stem}.png>)" in md
    # The hostile user name, escaped: a Markdown viewer shows it, makes no element of it.
    assert "\\<img src=x onerror=alert(1)\\>@10.0.3.4" in md
    assert HOSTILE not in md
    assert ": innodb\\_flush\\_log\\_at\\_trx\\_commit 1→2\n" in md  # the change inside it

    report = download(page, "export-episode-html")
    assert report.suggested_filename == f"{stem}.html"
    html = saved(report, shots).read_text(encoding="utf-8")
    assert f'<tr><th scope="row">Main cause</th><td>{cause}</td></tr>' in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert HOSTILE not in html and "<script" not in html
    # The lag chart embedded as a picture: the one img of the report.
    assert html.count("<img ") == 1 and '<img src="data:image/png;base64,' in html

    # Opened in the browser, the report shows the hostile text and runs nothing.
    reader = page.context.new_page()
    dialogs: list[str] = []
    reader.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        reader.set_content(html)
        expect(reader.get_by_role("heading", level=1)).to_contain_text("Lag episode: replica1")
        expect(reader.locator("body")).to_contain_text(f"{HOSTILE}@10.0.3.4")
        chart = reader.locator("figure img")
        expect(chart).to_have_count(1)
        assert reader.evaluate("document.querySelector('figure img').naturalWidth") > 300
    finally:
        reader.close()
    assert dialogs == []
