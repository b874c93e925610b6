import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { buildCompareModel, type CompareOut } from "./compare";
import type { SeriesOut } from "./series";
import {
  channelsSpan,
  compareChannelsLink,
  compareSearch,
  parseCompareQuery,
} from "./compareQuery";
import { FAR, NEAR, stats } from "../test/journalData";

const UTC = "UTC";
const T0 = Date.parse("2026-11-23T10:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function backlog(over: Partial<Schemas["BacklogOut"]> = {}): Schemas["BacklogOut"] {
  return {
    samples: 60,
    not_received_mean: 2,
    not_received_p95: 5,
    received_not_applied_mean: 1,
    received_not_applied_p95: 3,
    dominant: "not_received",
    ...over,
  };
}

function side(channel: Schemas["ChannelRef"], start: number, end: number, over: Partial<Schemas["CompareSideOut"]> = {}) {
  return {
    channel,
    window: { start: iso(start), end: iso(end) },
    stats: stats(),
    backlog: backlog(),
    ...over,
  };
}

function channels(over: Partial<CompareOut> = {}): CompareOut {
  return {
    mode: "channels",
    a: side(NEAR, T0, T0 + 600_000, { stats: stats({ lag_p50: 0.2, lag_p95: 0.4 }), backlog: backlog({ not_received_mean: 3 }) }),
    b: side(FAR, T0, T0 + 600_000, {
      stats: stats({ lag_p50: 4.5, lag_p95: 6.1 }),
      backlog: backlog({ not_received_mean: 180, received_not_applied_mean: 20 }),
    }),
    conclusion: "replica2 (far) lags more than replica1 (near) because of not_received (network / relay-log writes): …",
    impact: null,
    lagging: "b",
    cause: "not_received",
    ...over,
  };
}

function series(channelId: number, points: [number, number | null][], bucketMs = 10_000): SeriesOut {
  return {
    channel_id: channelId,
    instance_id: 1,
    metric: "lag_s",
    resolution: "raw",
    bucket_ms: bucketMs,
    points: points.map(([t, avg]) => ({ t, min: avg, avg, max: avg, last: avg, n: 1 })),
    note: null,
  } as SeriesOut;
}

const COLORS = new Map([
  [11, "#2f6fde"],
  [12, "#0f9d8a"],
]);

describe("buildCompareModel: two replicas", () => {
  it("names the replica behind and the side of it that lags, in words and an icon", () => {
    const model = buildCompareModel(channels(), {}, COLORS, 1000, UTC);
    expect(model.sides.map((s) => [s.label, s.header, s.region, s.color])).toEqual([
      ["replica1", "a · replica1", "near", "#2f6fde"],
      ["replica2", "b · replica2", "far", "#0f9d8a"],
    ]);
    expect(model.verdict).toMatchObject({ label: "replica2 lags: receive side (network / relay log)", icon: "⇣", tone: "warn" });
    expect(model.sentence).toMatch(/^replica2 \(far\) lags more/);
    expect(model.sides[0].window).toBe("23 Nov 10:00:00 – 10:10:00 (10 m)");
    expect(model.question).toContain("network or the apply");
  });

  it("puts the statistics side by side with the change from a to b", () => {
    const rows = new Map(buildCompareModel(channels(), {}, COLORS, 1000, UTC).rows.map((r) => [r.label, r]));
    expect(rows.get("lag p50")).toEqual({ label: "lag p50", a: "0.20 s", b: "4.5 s", change: "+4.3 s" });
    expect(rows.get("apply rate")).toEqual({ label: "apply rate", a: "103 trx/s", b: "103 trx/s", change: "× 1.00" });
    expect(rows.get("not received, mean")).toMatchObject({ a: "3.0 trx", b: "180 trx", change: "+177 trx" });
    expect(rows.get("most of the backlog")?.b).toBe("receive side (network / relay log)");
  });

  it("draws the backlog split of both to one scale", () => {
    const [a, b] = buildCompareModel(channels(), {}, COLORS, 1000, UTC).backlog;
    expect(b).toMatchObject({ notReceived: 180, queued: 20, notReceivedShare: 0.9, queuedShare: 0.1 });
    expect(a?.notReceivedShare).toBeCloseTo(3 / 200);
  });

  it("says so when neither is behind", () => {
    const model = buildCompareModel(channels({ lagging: null, cause: null }), {}, COLORS, 1000, UTC);
    expect(model.verdict).toMatchObject({ label: "neither is behind", tone: "ok" });
  });

  it("overlays both lines on the shared clock, a gap where a series has no value", () => {
    const model = buildCompareModel(
      channels(),
      {
        a: series(11, [
          [T0, 0.1],
          [T0 + 10_000, 0.2],
          [T0 + 60_000, 0.3],
        ]),
        b: series(12, [[T0, 5]]),
      },
      COLORS,
      1000,
      UTC,
    );
    expect(model.chart.xKind).toBe("time");
    expect(model.chart.domain).toEqual([T0, T0 + 600_000]);
    expect(model.chart.lines[0]?.points.map((p) => p.y)).toEqual([0.1, 0.2, null, 0.3, null]);
    expect(model.chart.lines[1]?.points[0]).toEqual({ x: T0, y: 5 });
  });
});

describe("buildCompareModel: two windows of one replica", () => {
  const after = T0 + 3_600_000;
  const windows: CompareOut = {
    mode: "windows",
    a: side(NEAR, T0, T0 + 20_000),
    b: side(NEAR, after, after + 30_000, { stats: stats({ lag_p50: 3 }) }),
    conclusion: "b against a: improved — apply rate 103 → 948 trx/s",
    impact: { verdict: "improved", lag_change_p50: -37, load_change: 1, reason: "apply rate 103 → 948 trx/s" },
    lagging: null,
    cause: null,
  };

  it("overlays the windows on seconds from their own start, the baseline dashed", () => {
    const model = buildCompareModel(
      windows,
      { a: series(11, [[T0 + 5_000, 40]], 1000), b: series(11, [[after + 5_000, 3]], 1000) },
      COLORS,
      1000,
      UTC,
    );
    expect(model.chart.xKind).toBe("offset");
    expect(model.chart.domain).toEqual([0, 30]);
    expect(model.chart.lines.map((l) => [l.dashed, l.points[0]])).toEqual([
      [true, { x: 5, y: 40 }],
      [false, { x: 5, y: 3 }],
    ]);
    expect(model.sides.map((s) => [s.label, s.header])).toEqual([
      ["replica1 · window a (baseline)", "window a (baseline)"],
      ["replica1 · window b", "window b"],
    ]);
    expect(model.verdict).toMatchObject({ label: "improved", icon: "✓" });
    expect(model.rows.find((r) => r.label === "lag p50")?.change).toBe("−37.0 s");
  });
});

describe("compare query in the URL", () => {
  it("reads two windows of one replica", () => {
    const query = parseCompareQuery(
      new URLSearchParams("channel=11&a_from=2026-11-23T10:00:00Z&a_to=2026-11-23T10:00:20Z&b_from=2026-11-23T11:00:00Z&b_to=2026-11-23T11:00:30Z"),
    );
    expect(query).toEqual({
      mode: "windows",
      channelId: 11,
      a: { startMs: T0, endMs: T0 + 20_000 },
      b: { startMs: T0 + 3_600_000, endMs: T0 + 3_630_000 },
    });
    expect(compareSearch(query)).toContain("a_from=2026-11-23T10%3A00%3A00.000Z");
  });

  it("reads two replicas over a range or a window, and leaves missing ones to the page", () => {
    expect(parseCompareQuery(new URLSearchParams("channel=11&other=12&range=6h"))).toEqual({
      mode: "channels",
      channelId: 11,
      otherId: 12,
      range: "6h",
      span: null,
    });
    const bare = parseCompareQuery(new URLSearchParams("channel=x"));
    expect(bare).toMatchObject({ mode: "channels", channelId: null, otherId: null, range: "1h" });
    if (bare.mode !== "channels") throw new Error("mode");
    expect(channelsSpan(bare, T0)).toEqual({ startMs: T0 - 3_600_000, endMs: T0 });
    expect(compareSearch(bare)).toBe("");
  });

  it("links the explorer's 'compare with…' to a window of two replicas", () => {
    const url = new URL(compareChannelsLink(1, 11, null, T0, T0 + 60_000), "http://x");
    expect(url.pathname).toBe("/clusters/1/compare");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      channel: "11",
      from: "2026-11-23T10:00:00.000Z",
      to: "2026-11-23T10:01:00.000Z",
    });
  });
});
