"""Dark mode, in Chromium over the real pipeline: every page of the app read in
the dark theme (the system's preference, emulated) and in the light one, each saved as a
full-page screenshot, and each measured in the page itself — the WCAG contrast between every
visible text and its effective background (4.5:1, 3:1 for large text) and between the charts'
axis labels and the chart's background (3:1). The header's toggle overrides the system once,
and the choice outlives a reload.

One context for the module, pages visited in order. Screenshots go to $E2E_SCREENSHOT_DIR
(default: a pytest temporary directory; conftest's ``shots``), printed at the start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.integration.api_stack import ApiServer
from tests.integration.pipeline_stack import Pipeline

from .conftest import StoredEpisode, new_context

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

THEME_KEY = "lagscope.theme"

# Measured in the page: the colours the browser computed, each text against the background it
# is drawn on (the first opaque background up its ancestors, translucent ones composited over
# it). Text inside SVG is the charts' business (checked apart, 3:1); a disabled control, a
# transparent text (drawn beside its sliver instead) and a visually hidden one are skipped.
MEASURE = """
() => {
  const parse = (text) => {
    let m = /^rgba?\\(([^)]+)\\)$/.exec(text);
    if (m) {
      const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
      return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
    }
    m = /^color\\(srgb ([^)]+)\\)$/.exec(text);
    if (m) {
      const p = m[1].split(/[\\s\\/]+/).filter(Boolean).map(Number);
      return { r: p[0] * 255, g: p[1] * 255, b: p[2] * 255, a: p.length > 3 ? p[3] : 1 };
    }
    return null;
  };
  const over = (top, bottom) => {
    const mix = (t, b) => t * top.a + b * (1 - top.a);
    return { r: mix(top.r, bottom.r), g: mix(top.g, bottom.g), b: mix(top.b, bottom.b), a: 1 };
  };
  const lum = (c) => {
    const lin = (v) => {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  };
  const ratio = (fg, bg) => {
    const f = fg.a < 1 ? over(fg, bg) : fg;
    const [hi, lo] = [lum(f), lum(bg)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) {
        layers.push(c);
        if (c.a >= 1) break;
      }
    }
    const opaque = layers.length && layers[layers.length - 1].a >= 1;
    let bg = opaque ? layers.pop() : { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  const css = (c) => `rgb(${Math.round(c.r)}, ${Math.round(c.g)}, ${Math.round(c.b)})`;
  const round = (x) => Math.round(x * 100) / 100;
  const name = (el) => {
    const classes = typeof el.className === "string" ? el.className.trim() : "";
    return el.tagName.toLowerCase() + (classes ? "." + classes.split(/\\s+/).join(".") : "");
  };

  const failures = [];
  let texts = 0;
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg, script, style, option, .visually-hidden")) continue;
    const own = [...el.childNodes].some(
      (n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim() !== "",
    );
    if (!own) continue;
    if (el.closest(":disabled")) continue;
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
    const box = el.getBoundingClientRect();
    if (box.width < 2 || box.height < 2) continue;
    const style = getComputedStyle(el);
    const fg = parse(style.color);
    if (!fg || fg.a === 0) continue;
    const bg = background(el);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    const need = large ? 3 : 4.5;
    const got = ratio(fg, bg);
    texts += 1;
    if (got < need) {
      failures.push({
        element: name(el),
        text: el.textContent.trim().slice(0, 60),
        color: css(fg),
        background: css(bg),
        ratio: round(got),
        need,
      });
    }
  }

  const ticks = [];
  for (const tick of document.querySelectorAll(".recharts-cartesian-axis-tick-value")) {
    if (!tick.getBoundingClientRect().width) continue;
    const fg = parse(getComputedStyle(tick).fill);
    const bg = background(tick.closest("svg").parentElement);
    const text = tick.textContent;
    if (!fg) {
      ticks.push({ text, color: getComputedStyle(tick).fill, ratio: 0 });
      continue;
    }
    ticks.push({ text, color: css(fg), background: css(bg), ratio: round(ratio(fg, bg)) });
  }

  const page = background(document.querySelector("main") ?? document.body);
  return {
    theme: document.documentElement.dataset.theme ?? null,
    pageBackground: css(page),
    pageLuminance: lum(page),
    texts,
    failures,
    ticks,
  };
}
"""


@pytest.fixture(scope="module")
def login_page(browser: Browser, api: ApiServer) -> Iterator[Page]:
    """The one page a signed-in user never sees: its own context, no token."""
    context = new_context(browser, api, None)
    try:
        yield context.new_page()
    finally:
        context.close()


def app_pages(cluster_id: int, episode_id: int) -> list[tuple[str, str, bool]]:
    """(name, path, has charts): every route of App.tsx (the settings tabs: settings_tabs)."""
    cluster = f"/clusters/{cluster_id}"
    return [
        ("overview", "/", False),
        ("explorer", f"{cluster}?range=15m", True),
        ("journal", f"{cluster}/journal", False),
        ("episodes", f"{cluster}/episodes", False),
        ("episode", f"{cluster}/episodes/{episode_id}", True),
        ("compare", f"{cluster}/compare", False),
        ("appliers", f"{cluster}/workers", False),
        ("alerts", "/alerts", False),
        ("inbox", "/inbox", False),
        ("not-found", "/no-such-page", False),
    ]


def settings_tabs(page: Page) -> list[tuple[str, str, bool]]:
    """Each tab the settings page offers the admin, as its own nav lists them (a tab added later
    is visited too)."""
    page.goto("/settings")
    tabs = page.get_by_role("navigation", name="Settings").get_by_role("link")
    expect(tabs.first).to_be_visible()
    paths = [tabs.nth(i).get_attribute("href") or "" for i in range(tabs.count())]
    assert "/settings/servers" in paths, paths
    return [(f"settings-{path.rsplit('/', 1)[-1]}", path, False) for path in paths]


def settled(page: Page, charts: bool) -> None:
    """The page drawn: its heading shown, nothing still loading, and on a chart page the lines."""
    expect(page.locator("main h1, .login h1").first).to_be_visible()
    expect(page.locator(".state-loading")).to_have_count(0)
    if charts:
        expect(page.locator(".recharts-cartesian-axis-tick-value").first).to_be_visible()
        expect(page.locator(".recharts-line-curve").first).to_be_attached()


def every_explorer_chart_drawn(page: Page) -> None:
    """The explorer's charts below the fold draw once scrolled near: each with its lines, so
    their axes and legends are measured too, not their empty states."""
    page.get_by_role(
        "heading", name="What does each server spend its writes on?"
    ).scroll_into_view_if_needed()
    rates = page.get_by_role("region", name="Does each replica apply as fast as the source writes?")
    expect(rates.locator(".recharts-line-curve")).to_have_count(3)  # the source, both replicas
    commits = page.get_by_role("figure", name="Commits per second", exact=True)
    expect(commits.locator(".recharts-line-curve")).to_have_count(3)
    page.evaluate("window.scrollTo(0, 0)")


def read_and_save(page: Page, theme: str, name: str, charts: bool, shots: Path) -> dict[str, Any]:
    path = shots / f"{theme}-{name}.png"
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    measured: dict[str, Any] = page.evaluate(MEASURE)
    assert measured["theme"] == theme, f"{name}: the page is in the {measured['theme']} theme"
    # The theme really painted: a dark page is dark, a light one light (the contrast checks
    # alone would pass a page that ignored the theme).
    if theme == "dark":
        assert measured["pageLuminance"] < 0.05, f"{name}: {measured['pageBackground']}"
    else:
        assert measured["pageLuminance"] > 0.8, f"{name}: {measured['pageBackground']}"
    assert measured["texts"] >= 3, f"{name}: only {measured['texts']} texts measured"
    failures = measured["failures"]
    assert failures == [], f"{theme} {name}: text below WCAG contrast: {failures}"
    if charts:
        assert measured["ticks"], f"{name}: no axis labels"
    faint = [t for t in measured["ticks"] if t["ratio"] < 3]
    assert faint == [], f"{theme} {name}: axis labels that do not stand out: {faint[:5]}"
    return measured


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_every_page_reads_in_the_theme_the_system_asks_for(
    module_page: Page,
    login_page: Page,
    pipeline: Pipeline,
    stored_episode: StoredEpisode,
    shots: Path,
    theme: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with capsys.disabled():
        print(f"\ntheme screenshots ({theme}): {shots}")
    page = module_page
    page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    pages = app_pages(pipeline.cluster_id, stored_episode.id) + settings_tabs(page)
    for name, path, charts in pages:
        page.goto(path)
        settled(page, charts)
        if name == "explorer":
            every_explorer_chart_drawn(page)
        read_and_save(page, theme, name, charts, shots)
    login_page.emulate_media(color_scheme=theme)  # type: ignore[arg-type]
    login_page.goto("/login")
    expect(login_page.get_by_role("button", name="Sign in")).to_be_visible()
    read_and_save(login_page, theme, "login", False, shots)


def test_the_toggle_overrides_the_system_and_is_kept(
    module_page: Page, pipeline: Pipeline, shots: Path
) -> None:
    page = module_page
    page.emulate_media(color_scheme="light")
    page.goto(f"/clusters/{pipeline.cluster_id}?range=15m")
    settled(page, True)
    html = page.locator("html")
    expect(html).to_have_attribute("data-theme", "light")
    toggle = page.get_by_label("Theme")
    expect(toggle).to_have_value("system")
    expect(toggle.locator("option[value=system]")).to_have_text("system (light)")

    toggle.select_option("dark")
    # At once, without a reload: the page and the charts' axis labels in the dark theme's colours.
    expect(html).to_have_attribute("data-theme", "dark")
    measured = read_and_save(page, "dark", "explorer-toggled", True, shots)
    assert measured["ticks"]
    assert page.evaluate(f"localStorage.getItem({THEME_KEY!r})") == "dark"

    # Kept across a reload, whatever the system says.
    page.reload()
    settled(page, True)
    expect(html).to_have_attribute("data-theme", "dark")
    expect(page.get_by_label("Theme")).to_have_value("dark")

    # Back to following the system, which says light.
    page.get_by_label("Theme").select_option("system")
    expect(html).to_have_attribute("data-theme", "light")
    assert page.evaluate(f"localStorage.getItem({THEME_KEY!r})") == "system"
