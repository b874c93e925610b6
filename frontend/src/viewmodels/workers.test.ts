import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { bucketStarts, buildGroupCommitModel, buildHeatmapModel, buildLagStrip, shareColor } from "./workers";

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
const bucket = (s: number, busy: (number | null)[], avg: number | null) => ({
  t: T0 + s * 1000,
  reads: 5,
  workers: busy.length,
  busy_share: busy,
  active_share: busy.map((b) => (b === null ? 1 : Math.max(b, 0.5))),
  busy_avg: avg,
  active_avg: 2,
});

function instance(over: Partial<Schemas["InstanceWorkersOut"]> = {}): Schemas["InstanceWorkersOut"] {
  return {
    instance_id: 2,
    instance_name: "replica1",
    flavor: "mariadb",
    configured_workers: 4,
    configured_param: "slave_parallel_threads",
    read_at: null,
    problem: null,
    workers: [],
    channels: [{ channel: "", buckets: [bucket(0, [1], 1), bucket(20, [1, 0.5, 0, 0], 1.5)] }],
    ...over,
  };
}

describe("buildHeatmapModel", () => {
  it("lays workers out as rows over every bucket of the range, gaps as null", () => {
    const model = buildHeatmapModel(instance(), T0, T0 + 30_000, 10_000);
    expect(model.columns).toEqual([T0, T0 + 10_000, T0 + 20_000]);
    expect(model.rows.map((r) => r.label)).toEqual(["worker 1", "worker 2", "worker 3", "worker 4"]);
    expect(model.rows[0]?.cells.map((c) => c.share)).toEqual([1, null, 1]);
    expect(model.rows[1]?.cells.map((c) => c.share)).toEqual([null, null, 0.5]);
    expect(model.summary).toBe("4 configured (slave_parallel_threads) · 4 seen · 1.3 busy on average");
    expect(model.empty).toBe(false);
  });

  it("names the SQL thread when apply is serial, and the channel when there are several", () => {
    const serial = buildHeatmapModel(
      instance({ configured_workers: 0, channels: [{ channel: "", buckets: [bucket(0, [0.8], 0.8)] }] }),
      T0,
      T0 + 10_000,
      10_000,
    );
    expect(serial.rows.map((r) => r.label)).toEqual(["SQL thread"]);
    const multi = buildHeatmapModel(
      instance({
        configured_workers: 2,
        channels: [
          { channel: "east", buckets: [bucket(0, [null, null], null)] },
          { channel: "west", buckets: [bucket(0, [null], null)] },
        ],
      }),
      T0,
      T0 + 10_000,
      10_000,
    );
    expect(multi.rows.map((r) => r.label)).toEqual(["east · worker 1", "east · worker 2", "west · worker 1"]);
    expect(multi.summary).toContain("busy share unknown (MySQL 5.7 cannot tell)");
    expect(buildHeatmapModel(instance({ channels: [] }), T0, T0 + 1, 1).empty).toBe(true);
  });

  it("keeps the privilege problem to show it", () => {
    const problem = "monitoring user lacks the privilege to read applier workers: GRANT PROCESS ON *.* TO 'm'@'<lagscope host>'";
    const model = buildHeatmapModel(instance({ problem, channels: [] }), T0, T0 + 1000, 1000);
    expect(model.problem).toBe(problem);
    expect(model.empty).toBe(true);
  });

  it("aligns the columns on the API's buckets", () => {
    expect(bucketStarts(T0 + 3000, T0 + 25_000, 10_000, T0 + 10_000)).toEqual([T0, T0 + 10_000, T0 + 20_000]);
  });
});

describe("shareColor", () => {
  it("goes from the idle colour to the busy one, in the theme's colours, grey when unknown", () => {
    expect(shareColor(0)).toBe("color-mix(in srgb, var(--heat-busy) 0%, var(--heat-idle))");
    expect(shareColor(0.426)).toBe("color-mix(in srgb, var(--heat-busy) 43%, var(--heat-idle))");
    expect(shareColor(1)).toBe("color-mix(in srgb, var(--heat-busy) 100%, var(--heat-idle))");
    expect(shareColor(2)).toBe("color-mix(in srgb, var(--heat-busy) 100%, var(--heat-idle))");
    expect(shareColor(null)).toBe("var(--heat-unknown)");
  });
});

describe("buildGroupCommitModel", () => {
  it("joins the rates per bucket and turns lanes into segments", () => {
    const pt = (s: number, v: number | null) => ({ t: T0 + s * 1000, min: v, avg: v, max: v, last: v, n: 1 });
    const series = (metric: string, points: ReturnType<typeof pt>[]) => ({
      metric,
      resolution: "raw",
      bucket_ms: 1000,
      points,
      note: null,
    });
    const model = buildGroupCommitModel({
      instance_id: 1,
      instance_name: "source",
      flavor: "mariadb",
      start: new Date(T0).toISOString(),
      end: new Date(T0 + 10_000).toISOString(),
      series: {
        binlog_commits_per_s: series("binlog_commits_per_s", [pt(0, 900), pt(1, 1000)]),
        binlog_group_commits_per_s: series("binlog_group_commits_per_s", [pt(0, 300), pt(1, 250)]),
        commits_per_group: series("commits_per_group", [pt(0, 3), pt(1, 4)]),
        semi_sync_avg_wait_s: series("semi_sync_avg_wait_s", [pt(1, 0.002)]),
      },
      lanes: [
        {
          name: "sync_binlog",
          segments: [
            { start: new Date(T0).toISOString(), end: new Date(T0 + 5000).toISOString(), value: "0" },
            { start: new Date(T0 + 5000).toISOString(), end: new Date(T0 + 10_000).toISOString(), value: "1" },
          ],
          changes: [],
        },
      ],
      notes: [],
    });
    expect(model.rows).toEqual([
      { t: T0, commits: 900, groups: 300, perGroup: 3, logFsyncs: null, dataFsyncs: null, semiSyncWaitMs: null },
      { t: T0 + 1000, commits: 1000, groups: 250, perGroup: 4, logFsyncs: null, dataFsyncs: null, semiSyncWaitMs: 2 },
    ]);
    expect(model.lanes).toEqual([
      {
        name: "sync_binlog",
        segments: [
          { startMs: T0, endMs: T0 + 5000, value: "0" },
          { startMs: T0 + 5000, endMs: T0 + 10_000, value: "1" },
        ],
      },
    ]);
  });
});

describe("buildLagStrip", () => {
  it("takes the worst channel per bucket and the range's maximum", () => {
    const pt = (s: number, max: number | null, avg: number | null) => ({ t: T0 + s * 1000, min: avg, avg, max, last: avg, n: 1 });
    const one = (channel_id: number, points: ReturnType<typeof pt>[]) => ({
      channel_id,
      instance_id: 2,
      metric: "lag_s" as const,
      resolution: "raw" as const,
      bucket_ms: 1000,
      points,
      note: null,
    });
    const strip = buildLagStrip({
      metric: "lag_s",
      start: T0,
      end: T0 + 3000,
      series: [one(1, [pt(0, 2, 1), pt(1, null, 3)]), one(2, [pt(0, 5, 4)])],
    });
    expect(strip.rows).toEqual([
      { t: T0, lag: 5 },
      { t: T0 + 1000, lag: 3 },
    ]);
    expect(strip.maxS).toBe(5);
    expect(buildLagStrip(undefined)).toEqual({ rows: [], maxS: null });
  });
});
