import { describe, expect, it } from "vitest";
import {
  DEFAULT_STATE,
  explorerSearch,
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
    expect(reset).toEqual({ ...DEFAULT_STATE, range: "6h" });
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
