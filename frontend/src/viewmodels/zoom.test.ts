import { describe, expect, it } from "vitest";
import { MIN_ZOOM_SPAN_MS, timeAtPx, zoomRange } from "./zoom";

const HOUR = 3_600_000;
const bounds = { startMs: 10 * HOUR, endMs: 11 * HOUR };

describe("zoomRange", () => {
  it("orders a right-to-left drag", () => {
    expect(zoomRange(10.5 * HOUR, 10.25 * HOUR, bounds)).toEqual({ fromMs: 10.25 * HOUR, toMs: 10.5 * HOUR });
  });

  it("clamps a drag that leaves the plot to the chart's window", () => {
    expect(zoomRange(9 * HOUR, 10.5 * HOUR, bounds)).toEqual({ fromMs: 10 * HOUR, toMs: 10.5 * HOUR });
    expect(zoomRange(10.5 * HOUR, 12 * HOUR, bounds)).toEqual({ fromMs: 10.5 * HOUR, toMs: 11 * HOUR });
  });

  it("ignores a click or a twitch (under 1/200 of the plot)", () => {
    expect(zoomRange(10.5 * HOUR, 10.5 * HOUR, bounds)).toBeNull();
    expect(zoomRange(10.5 * HOUR, 10.5 * HOUR + 17_000, bounds)).toBeNull();
    // Entirely off the plot: clamped to nothing.
    expect(zoomRange(12 * HOUR, 13 * HOUR, bounds)).toBeNull();
  });

  it("widens a narrow drag to the minimum span around its centre", () => {
    const centre = 10.5 * HOUR;
    expect(zoomRange(centre - 10_000, centre + 10_000, bounds)).toEqual({
      fromMs: centre - MIN_ZOOM_SPAN_MS / 2,
      toMs: centre + MIN_ZOOM_SPAN_MS / 2,
    });
  });

  it("keeps a widened window inside the chart at its edges", () => {
    expect(zoomRange(11 * HOUR - 20_000, 11 * HOUR, bounds)).toEqual({ fromMs: 11 * HOUR - MIN_ZOOM_SPAN_MS, toMs: 11 * HOUR });
    expect(zoomRange(10 * HOUR, 10 * HOUR + 20_000, bounds)).toEqual({ fromMs: 10 * HOUR, toMs: 10 * HOUR + MIN_ZOOM_SPAN_MS });
  });

  it("never makes a window wider than the chart's", () => {
    const small = { startMs: 0, endMs: 40_000 };
    expect(zoomRange(1_000, 3_000, small)).toEqual({ fromMs: 0, toMs: 40_000 });
  });

  it("rounds to whole milliseconds and refuses nonsense", () => {
    expect(zoomRange(10 * HOUR + 0.4, 10.5 * HOUR + 0.6, bounds)).toEqual({ fromMs: 10 * HOUR, toMs: 10.5 * HOUR + 1 });
    expect(zoomRange(Number.NaN, 10.5 * HOUR, bounds)).toBeNull();
    expect(zoomRange(1, 2, { startMs: 5, endMs: 5 })).toBeNull();
  });
});

describe("timeAtPx", () => {
  it("maps the plot's pixels onto its window and nothing off it", () => {
    expect(timeAtPx(0, 1000, 0, 10_000)).toBe(0);
    expect(timeAtPx(250, 1000, 0, 10_000)).toBe(2_500);
    expect(timeAtPx(1000, 1000, 0, 10_000)).toBe(10_000);
    expect(timeAtPx(-1, 1000, 0, 10_000)).toBeNull();
    expect(timeAtPx(1001, 1000, 0, 10_000)).toBeNull();
    expect(timeAtPx(0, 0, 0, 10_000)).toBeNull();
  });
});
