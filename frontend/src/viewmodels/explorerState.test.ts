import { describe, expect, it } from "vitest";
import {
  DEFAULT_STATE,
  explorerSearch,
  explorerWindow,
  isLive,
  parseExplorerState,
  zoomedOut,
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
