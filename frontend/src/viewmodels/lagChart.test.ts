import { describe, expect, it } from "vitest";
import { buildLagChartModel, gapReason, linePath, LOG_FLOOR_S, metricsFor, niceTop, rowAt, type LagChartInput } from "./lagChart";
import { channelStatus } from "../test/statusData";

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
const pt = (t: number, v: number, min = v, max = v) => ({ t: T0 + t * 1000, min, avg: v, max, last: v, n: 1 });

function response(metric: "lag_s" | "heartbeat_lag_s", series: { channel: number; bucketMs?: number; points: ReturnType<typeof pt>[] }[]) {
  return {
    metric,
    start: T0,
    end: T0 + 60_000,
    series: series.map((s) => ({
      channel_id: s.channel,
      instance_id: s.channel + 1,
      metric,
      resolution: "raw" as const,
      bucket_ms: s.bucketMs ?? 1000,
      points: s.points,
      note: null,
    })),
  };
}

const channels = [
  channelStatus({ id: 1, instance_id: 2, instance: "replica1", sql_running: false, verdict: "stopped" }),
  channelStatus({ id: 2, instance_id: 3, instance: "replica2" }),
];

function input(over: Partial<LagChartInput> = {}): LagChartInput {
  return {
    series: {
      lag_s: response("lag_s", [
        { channel: 1, points: [pt(0, 1), pt(1, 2), pt(2, 3)] }, // stops after 2 s
        { channel: 2, points: [pt(0, 4), pt(1, 5), pt(2, 6), pt(30, 7), pt(59, 8)] },
      ]),
    },
    channels,
    colors: new Map([
      [1, "#111"],
      [2, "#222"],
    ]),
    source: "best",
    hidden: [],
    log: false,
    verdicts: {
      cluster_id: 1,
      start: T0,
      end: T0 + 60_000,
      channels: [
        {
          channel_id: 1,
          instance_id: 2,
          resolution: "raw",
          bucket_ms: 1000,
          runs: [
            { start: T0, end: T0 + 3000, verdict: "caught_up" },
            { start: T0 + 3000, end: T0 + 60_000, verdict: "stopped" },
          ],
        },
      ],
    },
    pollIntervalS: 1,
    startMs: T0,
    endMs: T0 + 60_000,
    ...over,
  };
}

describe("buildLagChartModel", () => {
  it("draws one line per replica channel with its accent colour", () => {
    const model = buildLagChartModel(input());
    expect(model.lines.map((l) => [l.label, l.color, l.dash])).toEqual([
      ["replica1", "#111", undefined],
      ["replica2", "#222", undefined],
    ]);
  });

  it("draws NULL as a gap (null), never 0, with the reason", () => {
    const model = buildLagChartModel(input());
    const row = (t: number) => model.rows.find((r) => r.t === T0 + t * 1000);
    expect(row(3)?.["best:1"]).toBeNull();
    expect(row(30)?.["best:1"]).toBeNull();
    expect(row(3)?.["best:2"]).toBeNull(); // replica2 has a gap between 2 s and 30 s too
    const gap = model.gaps.find((g) => g.channelId === 1);
    expect(gap).toMatchObject({ fromMs: T0 + 3000, toMs: T0 + 60_000 });
    expect(gap?.reason).toMatch(/^SQL thread stopped since \d\d:\d\d:03$/);
  });

  it("fills a row another line has only inside a continuous stretch", () => {
    const model = buildLagChartModel(
      input({
        series: {
          lag_s: response("lag_s", [
            { channel: 1, points: [pt(0, 1), pt(2, 3)] },
            { channel: 2, points: [pt(0, 4), pt(1, 5), pt(2, 6)] },
          ]),
        },
        pollIntervalS: 1,
        endMs: T0 + 3000,
      }),
    );
    expect(model.rows.find((r) => r.t === T0 + 1000)?.["best:1"]).toBe(2);
  });

  it("hides hidden channels", () => {
    const model = buildLagChartModel(input({ hidden: [2] }));
    expect(model.lines.map((l) => l.channelId)).toEqual([1]);
    expect(model.rows.every((r) => !("best:2" in r))).toBe(true);
  });

  it("floors values on a log scale and says so", () => {
    const model = buildLagChartModel(
      input({ log: true, series: { lag_s: response("lag_s", [{ channel: 2, points: [pt(0, 0), pt(1, 5)] }]) } }),
    );
    expect(model.rows[0]?.["best:2"]).toBe(LOG_FLOOR_S);
    expect(model.notes.some((n) => n.startsWith("log scale"))).toBe(true);
  });

  it("adds a min/max band when buckets are coarse", () => {
    const model = buildLagChartModel(
      input({
        series: { lag_s: response("lag_s", [{ channel: 2, bucketMs: 60_000, points: [pt(0, 2, 1, 9), pt(60, 3, 2, 4)] }]) },
        endMs: T0 + 120_000,
      }),
    );
    expect(model.showBand).toBe(true);
    expect(model.rows[0]?.["best:2:band"]).toEqual([1, 9]);
  });

  it("puts every lag source side by side in 'all'", () => {
    expect(metricsFor("all")).toEqual(["lag_s", "heartbeat_lag_s", "applier_lag_s", "seconds_behind_source"]);
    const model = buildLagChartModel(
      input({
        source: "all",
        series: {
          lag_s: response("lag_s", [{ channel: 2, points: [pt(0, 1)] }]),
          heartbeat_lag_s: response("heartbeat_lag_s", [{ channel: 2, points: [pt(0, 1.2)] }]),
        },
      }),
    );
    expect(model.lines.map((l) => l.label)).toEqual(["replica2 (best)", "replica2 (heartbeat)"]);
    expect(model.lines[1]?.dash).toBe("6 3");
    expect(model.showBand).toBe(false);
  });

  it("says when a channel has no value at all", () => {
    const model = buildLagChartModel(
      input({ series: { lag_s: response("lag_s", [{ channel: 1, points: [] }]) }, verdicts: undefined }),
    );
    expect(model.empty).toBe(true);
    expect(model.notes).toContain("replica1: no best lag in this range");
    expect(model.gaps[0]).toMatchObject({ fromMs: T0, toMs: T0 + 60_000 });
  });
});

describe("gapReason", () => {
  it("names an unreachable replica and a past stop", () => {
    const runs = [{ start: T0, end: T0 + 10_000, verdict: "unreachable" }];
    expect(gapReason(undefined, runs, T0, T0 + 60_000, T0 + 60_000)).toMatch(/^unreachable since/);
    const stop = [{ start: T0, end: T0 + 10_000, verdict: "stopped" }];
    expect(gapReason(undefined, stop, T0, T0 + 10_000, T0 + 60_000)).toMatch(/^replication stopped \d\d:\d\d:00–\d\d:\d\d:10$/);
  });
});

describe("the drawn lines (one SVG path each)", () => {
  const x = (t: number) => (t - T0) / 1000;
  const y = (v: number) => 100 - v;

  it("gives each line its own points with NULL kept as a break, never 0", () => {
    const model = buildLagChartModel(input());
    const line = model.lines.find((l) => l.channelId === 2);
    expect(line?.points.map((p) => [(p.t - T0) / 1000, p.value])).toEqual([
      [0, 4],
      [1, 5],
      [2, 6],
      [3, null], // nothing between 2 s and 30 s: a gap
      [30, 7],
      [31, null],
      [59, 8],
    ]);
    expect(linePath(line?.points ?? [], x, y)).toBe("M0,96L1,95L2,94M30,93M59,92");
    const stopped = model.lines.find((l) => l.channelId === 1);
    expect(linePath(stopped?.points ?? [], x, y)).toBe("M0,99L1,98L2,97"); // trailing NULL: ends there
  });

  it("breaks the path at NULL and at points the scales cannot place", () => {
    const points = [
      { t: T0, value: 1 },
      { t: T0 + 1000, value: 2 },
      { t: T0 + 2000, value: null },
      { t: T0 + 3000, value: 0 },
      { t: T0 + 4000, value: 0.5 },
      { t: T0 + 5000, value: 3 },
      { t: T0 + 6000, value: 4 },
    ];
    const noFive = (t: number) => (t === T0 + 5000 ? undefined : x(t));
    expect(linePath(points, noFive, y)).toBe("M0,99L1,98M3,100L4,99.5M6,96");
    expect(linePath(points, x, (v) => (v === 0 ? Number.NaN : y(v)))).toBe("M0,99L1,98M4,99.5L5,97L6,96");
    expect(linePath([], x, y)).toBe("");
  });

  it("rounds pixels to 2 decimals", () => {
    expect(linePath([{ t: T0 + 1234, value: 1 / 3 }], x, y)).toBe("M1.23,99.67");
  });

  it("floors a log scale's points and gives the axis top from lines and bands", () => {
    const log = buildLagChartModel(
      input({ log: true, series: { lag_s: response("lag_s", [{ channel: 2, points: [pt(0, 0), pt(1, 5)] }]) } }),
    );
    expect(log.lines[0]?.points.map((p) => p.value)).toEqual([LOG_FLOOR_S, 5, null]);
    expect([log.yMax, log.yTop]).toEqual([5, 5]);
    expect(buildLagChartModel(input()).yTop).toBe(8);
    const band = buildLagChartModel(
      input({
        series: { lag_s: response("lag_s", [{ channel: 2, bucketMs: 60_000, points: [pt(0, 2, 1, 9), pt(60, 3, 2, 4)] }]) },
        endMs: T0 + 120_000,
      }),
    );
    expect([band.yMax, band.yTop]).toEqual([9, 10]);
    const none = buildLagChartModel(input({ series: {} }));
    expect([none.yMax, none.yTop]).toEqual([null, null]);
  });

  it("rounds the linear top up to a round step", () => {
    expect([niceTop(63), niceTop(8), niceTop(0.37), niceTop(1000), niceTop(0), niceTop(9)]).toEqual([80, 8, 0.4, 1000, 1, 10]);
  });

  it("finds the tooltip's row by its exact time", () => {
    const model = buildLagChartModel(input());
    expect(rowAt(model, T0 + 30_000)?.["best:2"]).toBe(7);
    expect(rowAt(model, T0 + 30_500)).toBeUndefined();
    expect(rowAt({ rows: [] }, T0)).toBeUndefined();
  });
});
