import { describe, expect, it } from "vitest";
import { gapRanges, gapThresholdMs, withGaps } from "./series";

const p = (t: number, avg: number | null) => ({ t, min: avg, avg, max: avg, last: avg, n: 1 });

describe("withGaps", () => {
  it("keeps a continuous series as it is", () => {
    const out = withGaps([p(0, 1), p(1000, 2), p(2000, 3)], 1000, 1000);
    expect(out.map((x) => x.value)).toEqual([1, 2, 3]);
  });

  it("inserts a null where buckets are missing (NULL lag), never 0", () => {
    const out = withGaps([p(0, 1), p(1000, 2), p(10_000, 3)], 1000, 1000);
    expect(out.map((x) => x.value)).toEqual([1, 2, null, 3]);
    expect(out[2]?.t).toBe(2000);
  });

  it("tolerates empty buckets narrower than the poll interval", () => {
    const out = withGaps([p(0, 1), p(2000, 2)], 500, 1000);
    expect(out.map((x) => x.value)).toEqual([1, 2]);
    expect(gapThresholdMs(500, 1000)).toBe(3000);
  });

  it("ends with a gap when the series stops before the range does", () => {
    const out = withGaps([p(0, 1), p(1000, 2)], 1000, 1000, 60_000);
    expect(out.at(-1)).toEqual({ t: 2000, value: null, min: null, max: null });
    expect(gapRanges(out, 60_000)).toEqual([{ from: 2000, to: 60_000 }]);
  });
});
