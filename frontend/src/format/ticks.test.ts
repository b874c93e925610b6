import { describe, expect, it } from "vitest";
import { timeTicks } from "./ticks";

const T = Date.UTC(2026, 10, 23, 9, 15, 33);

describe("timeTicks", () => {
  it("puts a 15-minute range on round 2-minute ticks", () => {
    const ticks = timeTicks(T, T + 15 * 60_000);
    expect(ticks[0]).toBe(Date.UTC(2026, 10, 23, 9, 16, 0));
    expect(ticks[1]! - ticks[0]!).toBe(120_000);
    expect(ticks.length).toBeLessThanOrEqual(8);
  });

  it("aligns hour ticks to the local zone", () => {
    const offset = 5.5 * 3_600_000; // +05:30
    const ticks = timeTicks(T, T + 24 * 3_600_000, 8, offset);
    expect(ticks.every((t) => (t + offset) % (3 * 3_600_000) === 0)).toBe(true);
  });

  it("copes with an empty range", () => {
    expect(timeTicks(T, T)).toEqual([T]);
  });
});
