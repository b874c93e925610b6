import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { appendSamples, mergeSamples, parseSample, type LiveSample } from "./samples";

type SeriesResponse = Schemas["SeriesResponse"];

const sample = (channel_id: number, ts: number, lag_s: number | null = 1): LiveSample => ({
  channel_id,
  ts,
  lag_s,
  not_received: 0,
  received_not_applied: 5,
});

function response(points: [number, number][], end = 60_000): SeriesResponse {
  return {
    metric: "lag_s",
    start: 0,
    end,
    series: [
      {
        channel_id: 1,
        instance_id: 2,
        metric: "lag_s",
        bucket_ms: 10_000,
        resolution: "raw",
        points: points.map(([t, v]) => ({ t, avg: v, min: v, max: v, last: v, n: 1 })),
      },
      { channel_id: 3, instance_id: 4, metric: "lag_s", bucket_ms: 10_000, resolution: "raw", points: [] },
    ],
  } as SeriesResponse;
}

describe("parseSample", () => {
  it("reads a sample event and refuses what is not one", () => {
    const data = '{"channel_id":1,"ts":1700000000000,"lag_s":0.5,"lag_source":"heartbeat","verdict":"caught_up","not_received":0,"received_not_applied":null}';
    expect(parseSample(data)).toEqual({ channel_id: 1, ts: 1700000000000, lag_s: 0.5, not_received: 0, received_not_applied: null });
    expect(parseSample("{}")).toBeNull();
    expect(parseSample("not json")).toBeNull();
    expect(parseSample('{"channel_id":"1","ts":2}')).toBeNull();
  });
});

describe("appendSamples", () => {
  it("de-duplicates by channel and time, keeps time order and drops what is too old", () => {
    const buffer = appendSamples([], [sample(1, 1000), sample(2, 1000), sample(1, 2000)], 0);
    expect(buffer).toHaveLength(3);
    const again = appendSamples(buffer, [sample(1, 2000), sample(1, 1500), sample(1, 3000)], 0);
    expect(again.map((s) => `${s.channel_id}@${s.ts}`)).toEqual(["1@1000", "2@1000", "1@1500", "1@2000", "1@3000"]);
    expect(appendSamples(again, [], 1500).map((s) => s.ts)).toEqual([1500, 2000, 3000]);
    expect(appendSamples(again, [sample(1, 100)], 1000)).toBe(again); // nothing new: same array
  });
});

describe("mergeSamples", () => {
  it("appends samples after the fetched end into epoch-aligned buckets, topping up the last one", () => {
    const fetched = response([
      [40_000, 2],
      [50_000, 4],
    ]);
    const merged = mergeSamples(fetched, [sample(1, 55_000, 99), sample(1, 61_000, 6), sample(1, 65_000, 8), sample(1, 71_000, 1), sample(3, 62_000, 3)], "lag_s", 0, 80_000);
    const points = merged?.series[0]?.points ?? [];
    // 55 s is before the fetched end (60 s): already counted by the fetch.
    expect(points.map((p) => [p.t, p.avg, p.min, p.max, p.n])).toEqual([
      [40_000, 2, 2, 2, 1],
      [50_000, 4, 4, 4, 1],
      [60_000, 7, 6, 8, 2],
      [70_000, 1, 1, 1, 1],
    ]);
    expect(merged?.series[1]?.points.map((p) => p.t)).toEqual([60_000]);
    expect(merged?.end).toBe(80_000);
  });

  it("tops up a partial newest bucket with n-weighted averages", () => {
    const fetched = response([[50_000, 4]], 55_000);
    const merged = mergeSamples(fetched, [sample(1, 56_000, 8)], "lag_s", 0, 60_000);
    expect(merged?.series[0]?.points).toEqual([{ t: 50_000, avg: 6, min: 4, max: 8, last: 8, n: 2 }]);
  });

  it("does not invent a statistic the fetched bucket came without (rollups keep no min)", () => {
    const fetched = response([[50_000, 4]], 55_000);
    const first = fetched.series[0];
    if (first) first.points = [{ t: 50_000, avg: 4, min: null, max: 4, last: 4, n: 3 }];
    const merged = mergeSamples(fetched, [sample(1, 56_000, 8)], "lag_s", 0, 60_000);
    expect(merged?.series[0]?.points).toEqual([{ t: 50_000, avg: 5, min: null, max: 8, last: 8, n: 4 }]);
  });

  it("trims buckets that slid out of the window and moves its start", () => {
    const fetched = response([
      [0, 1],
      [10_000, 2],
      [50_000, 3],
    ]);
    const merged = mergeSamples(fetched, [sample(1, 75_000, 5)], "lag_s", 15_000, 80_000);
    expect(merged?.series[0]?.points.map((p) => p.t)).toEqual([10_000, 50_000, 70_000]);
    expect(merged?.start).toBe(15_000);
  });

  it("adds nothing for a sample without a value (the line gaps), and picks the metric asked for", () => {
    const fetched = response([[50_000, 4]]);
    expect(mergeSamples(fetched, [sample(1, 61_000, null)], "lag_s", 0, 80_000)?.series[0]?.points).toHaveLength(1);
    const backlog = mergeSamples(fetched, [sample(1, 61_000, null)], "received_not_applied", 0, 80_000);
    expect(backlog?.series[0]?.points.at(-1)).toMatchObject({ t: 60_000, avg: 5 });
  });

  it("leaves the response as it is when nothing is new, and passes undefined through", () => {
    const fetched = response([[50_000, 4]]);
    expect(mergeSamples(fetched, [sample(1, 30_000)], "lag_s", 0, 80_000)).toBe(fetched);
    expect(mergeSamples(undefined, [sample(1, 70_000)], "lag_s", 0, 80_000)).toBeUndefined();
  });
});
