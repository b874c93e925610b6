import { describe, expect, it } from "vitest";
import {
  DEFAULT_STATE,
  explorerSearch,
  fitDefaultRange,
  explorerWindow,
  isLive,
  parseExplorerState,
  zoomedIn,
  zoomedOut,
  zoomReset,
} from "./explorerState";

describe("explorer URL state", () => {
  it("defaults to the last hour, best lag, linear", () => {
    expect(parseExplorerState(new URLSearchParams(""))).toEqual(DEFAULT_STATE);
    expect(explorerSearch(DEFAULT_STATE)).toBe("");
  });

  it("round-trips a named range, hidden channels, source and log", () => {
    const state = parseExplorerState(new URLSearchParams("range=6h&hide=3,1&source=heartbeat&log=1"));
    expect(state).toMatchObject({ range: "6h", hidden: [3, 1], source: "heartbeat", log: true });
    expect(explorerSearch(state)).toBe("?range=6h&hide=1%2C3&source=heartbeat&log=1");
    expect(isLive(state)).toBe(true);
    expect(explorerWindow(state)).toEqual({ kind: "last", spanMs: 6 * 3_600_000 });
  });

  it("reads a custom window as fixed and not live", () => {
    const state = parseExplorerState(
      new URLSearchParams("from=2026-11-23T10:00:00.000Z&to=2026-11-23T11:00:00.000Z"),
    );
    expect(state.range).toBe("custom");
    expect(isLive(state)).toBe(false);
    expect(explorerWindow(state)).toEqual({
      kind: "fixed",
      startMs: Date.parse("2026-11-23T10:00:00Z"),
      endMs: Date.parse("2026-11-23T11:00:00Z"),
    });
    expect(explorerSearch(state)).toBe("?from=2026-11-23T10%3A00%3A00.000Z&to=2026-11-23T11%3A00%3A00.000Z");
  });

  it("reads the point budget within bounds", () => {
    expect(parseExplorerState(new URLSearchParams("pts=2000")).points).toBe(2000);
    expect(parseExplorerState(new URLSearchParams("pts=99999")).points).toBe(2000);
    expect(explorerSearch({ ...DEFAULT_STATE, points: 2000 })).toBe("?pts=2000");
  });

  it("ignores nonsense", () => {
    const state = parseExplorerState(new URLSearchParams("range=2y&source=x&hide=a,-1,2&from=9&to=1"));
    expect(state).toEqual({ ...DEFAULT_STATE, hidden: [2] });
  });

  it("zooms out around the centre without passing now", () => {
    expect(zoomedOut(1000, 2000, 10_000)).toEqual({ fromMs: 500, toMs: 2500 });
    expect(zoomedOut(1000, 2000, 2100)).toEqual({ fromMs: 100, toMs: 2100 });
  });
});

describe("drag to zoom in the URL", () => {
  const from = Date.parse("2026-11-23T10:05:00Z");
  const to = Date.parse("2026-11-23T10:09:00Z");

  it("remembers the preset the zoom left, and round-trips it", () => {
    const live = parseExplorerState(new URLSearchParams("range=15m&source=heartbeat"));
    const zoomed = { ...live, ...zoomedIn(live, from, to) };
    const search = explorerSearch(zoomed);
    expect(search).toBe("?from=2026-11-23T10%3A05%3A00.000Z&to=2026-11-23T10%3A09%3A00.000Z&preset=15m&source=heartbeat");
    const back = parseExplorerState(new URLSearchParams(search));
    expect(back).toEqual(zoomed);
    expect(isLive(back)).toBe(false);
    expect(explorerWindow(back)).toEqual({ kind: "fixed", startMs: from, endMs: to });
  });

  it("keeps the first preset through a second zoom, and resets to it", () => {
    const zoomed = { ...DEFAULT_STATE, ...zoomedIn({ ...DEFAULT_STATE, range: "6h" }, from, to) };
    const again = { ...zoomed, ...zoomedIn(zoomed, from + 60_000, to - 60_000) };
    expect(again.zoomFrom).toBe("6h");
    const reset = { ...again, ...zoomReset(again) };
    expect(reset).toEqual({ ...DEFAULT_STATE, range: "6h", chosen: true });
    expect(explorerSearch(reset)).toBe("?range=6h");
  });

  it("has no preset to return to after a hand-picked window, nor on a named range", () => {
    const picked = parseExplorerState(new URLSearchParams("from=2026-11-23T10:00:00Z&to=2026-11-23T11:00:00Z"));
    expect({ ...picked, ...zoomedIn(picked, from, to) }.zoomFrom).toBeNull();
    expect(zoomReset(picked)).toMatchObject({ range: DEFAULT_STATE.range });
    expect(parseExplorerState(new URLSearchParams("range=6h&preset=15m")).zoomFrom).toBeNull();
    expect(parseExplorerState(new URLSearchParams("from=2026-11-23T10:00:00Z&to=2026-11-23T11:00:00Z&preset=2y")).zoomFrom).toBeNull();
  });
});

describe("the default range fits young data", () => {
  const created = Date.parse("2026-11-25T12:00:00Z");
  const at = (s: number) => created + s * 1000;

  it("draws a fresh cluster's two minutes across the chart, not against the right edge of an hour", () => {
    const fitted = fitDefaultRange(DEFAULT_STATE, created, at(120));
    expect(fitted.fitMs).toBe(3 * 60_000); // 2 min of data + 30 s lead, in whole minutes
    expect(explorerWindow(fitted)).toEqual({ kind: "last", spanMs: 3 * 60_000 });
    expect(isLive(fitted)).toBe(true);
    expect(explorerSearch(fitted)).toBe(""); // never in the URL
  });

  it("grows by the minute with the data, never under two minutes", () => {
    expect(fitDefaultRange(DEFAULT_STATE, created, at(5)).fitMs).toBe(2 * 60_000);
    expect(fitDefaultRange(DEFAULT_STATE, created, at(-30)).fitMs).toBe(2 * 60_000); // clocks apart
    expect(fitDefaultRange(DEFAULT_STATE, created, at(20 * 60)).fitMs).toBe(21 * 60_000);
    expect(fitDefaultRange(DEFAULT_STATE, created, at(20 * 60 + 10)).fitMs).toBe(21 * 60_000);
  });

  it("is the default hour once the data is that old", () => {
    expect(fitDefaultRange(DEFAULT_STATE, created, at(59 * 60 + 30)).fitMs).toBeNull();
    expect(fitDefaultRange(DEFAULT_STATE, created, at(3 * 86_400)).fitMs).toBeNull();
    expect(explorerWindow(fitDefaultRange(DEFAULT_STATE, created, at(7200)))).toEqual({ kind: "last", spanMs: 3_600_000 });
    expect(fitDefaultRange(DEFAULT_STATE, null, at(60)).fitMs).toBeNull(); // start unknown
  });

  it("leaves a range the user chose, or one in the URL, as it is", () => {
    for (const search of ["range=1h", "range=15m", "range=6h", "from=2026-11-25T12:00:00Z&to=2026-11-25T12:01:00Z"]) {
      const state = parseExplorerState(new URLSearchParams(search));
      expect(state.chosen).toBe(true);
      expect(fitDefaultRange(state, created, at(120)).fitMs).toBeNull();
    }
    // Other URL state keeps the fit: hiding a line is not choosing a range.
    const hidden = parseExplorerState(new URLSearchParams("hide=2&source=heartbeat"));
    expect(fitDefaultRange(hidden, created, at(120)).fitMs).toBe(3 * 60_000);
  });

  it("writes a clicked 1h into the URL, so the page does not fit it again", () => {
    const clicked = { ...DEFAULT_STATE, range: "1h" as const, chosen: true };
    expect(explorerSearch(clicked)).toBe("?range=1h");
    expect(parseExplorerState(new URLSearchParams(explorerSearch(clicked)))).toEqual(clicked);
  });

  it("returns to the fitted default after a zoom from it, to a chosen preset after one from that", () => {
    const fitted = fitDefaultRange(DEFAULT_STATE, created, at(120));
    const zoomed = { ...fitted, ...zoomedIn(fitted, at(30), at(90)) };
    expect(zoomed.chosen).toBe(true);
    expect(explorerWindow(zoomed)).toEqual({ kind: "fixed", startMs: at(30), endMs: at(90) });
    const back = parseExplorerState(new URLSearchParams(explorerSearch({ ...zoomed, ...zoomReset(zoomed) })));
    expect(fitDefaultRange(back, created, at(150)).fitMs).toBe(3 * 60_000);
    const from6h = { ...DEFAULT_STATE, range: "6h" as const, chosen: true };
    const reset = { ...from6h, ...zoomedIn(from6h, at(30), at(90)) };
    expect(fitDefaultRange({ ...reset, ...zoomReset(reset) }, created, at(150)).fitMs).toBeNull();
  });
});
