import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import type { LiveSample } from "../live/samples";
import { channelStatus, clusterOut, instanceStatus } from "../test/statusData";
import { pt, seriesResponse, T0 } from "../test/seriesData";
import { channelCauses, segment } from "../test/episodesData";
import { buildExplorerModel, explorerSeries, spanMs, STRIP_POINTS, type ExplorerData } from "./explorerModel";
import { splitByMetric } from "./series";
import { DEFAULT_STATE, explorerWindow, type ExplorerState } from "./explorerState";

const channels = [
  channelStatus({ id: 1, instance_id: 2, instance: "replica1" }),
  channelStatus({ id: 2, instance_id: 3, instance: "replica2" }),
];
const fixed: ExplorerState = { ...DEFAULT_STATE, range: "custom", fromMs: T0, toMs: T0 + 60_000 };
const editor: Schemas["MeOut"] = { username: "ed", role: "editor", user_id: 4, via: "session" } as Schemas["MeOut"];

function data(over: Partial<ExplorerData> = {}): ExplorerData {
  return {
    cluster: clusterOut(),
    status: { cluster_id: 1, channels, instances: [instanceStatus()] } as unknown as Schemas["ClusterStatusOut"],
    statusAtMs: T0 + 60_000,
    me: undefined,
    lag: { lag_s: seriesResponse("lag_s", { 1: [pt(0, 1), pt(1, 2)], 2: [pt(0, 3), pt(1, 4)] }) },
    strips: {
      not_received: seriesResponse("not_received", { 1: [pt(0, 5)], 2: [pt(0, 6)] }),
      received_not_applied: seriesResponse("received_not_applied", { 1: [pt(0, 7)], 2: [pt(0, 8)] }),
    },
    instances: {},
    verdicts: undefined,
    changes: [],
    annotations: [],
    alertEvents: [],
    alertEventsLimit: 500,
    firing: [],
    rules: [],
    samples: [],
    ...over,
  };
}

const sample = (s: number, channel: number, lag: number): LiveSample => ({
  channel_id: channel,
  ts: T0 + s * 1000,
  lag_s: lag,
  not_received: 1,
  received_not_applied: 2,
});

describe("explorerSeries", () => {
  it("asks the lag and the strips of the replicas, the panels of every server: three requests", () => {
    const window = explorerWindow(DEFAULT_STATE);
    const asks = explorerSeries(clusterOut(), { source: "all", points: 600 }, window);
    expect(asks.lag.metrics).toEqual(["lag_s", "heartbeat_lag_s", "applier_lag_s", "seconds_behind_source"]);
    expect([asks.lag.instanceIds.join(), asks.lag.points]).toEqual(["2,3", 600]);
    const [strips, none] = asks.strips;
    expect(strips.metrics).toEqual(["not_received", "received_not_applied", "source_rate", "apply_rate"]);
    expect([strips.instanceIds.join(), strips.points]).toEqual(["2,3", STRIP_POINTS]);
    expect(none.metrics).toEqual([]);
    expect(asks.instances.instanceIds).toEqual([1, 2, 3]);
    expect(asks.instances.metrics.length).toBeGreaterThan(1);
  });

  it("gives the streamed backlog strips a request of their own while the stream feeds them", () => {
    const asks = explorerSeries(clusterOut(), DEFAULT_STATE, explorerWindow(DEFAULT_STATE), true);
    expect(asks.strips.map((a) => a.metrics)).toEqual([
      ["source_rate", "apply_rate"],
      ["not_received", "received_not_applied"],
    ]);
  });

  it("asks nothing of a cluster not loaded yet", () => {
    const asks = explorerSeries(undefined, DEFAULT_STATE, explorerWindow(DEFAULT_STATE));
    expect(asks.lag.instanceIds).toEqual([]);
  });
});

describe("splitByMetric", () => {
  const series = (metric: "lag_s" | "heartbeat_lag_s", channel: number) => ({
    channel_id: channel,
    instance_id: channel + 1,
    metric,
    resolution: "raw" as const,
    bucket_ms: 1000,
    points: [{ t: 0, min: 1, avg: 1, max: 1, last: 1, n: 1 }],
    note: null,
  });

  it("gives each metric its own answer, as a request of its own would have", () => {
    const body = {
      metric: "lag_s" as const,
      metrics: ["lag_s" as const, "heartbeat_lag_s" as const],
      start: 0,
      end: 10,
      series: [series("lag_s", 1), series("lag_s", 2), series("heartbeat_lag_s", 1)],
    };
    const split = splitByMetric(body);
    expect(Object.keys(split)).toEqual(["lag_s", "heartbeat_lag_s"]);
    expect(split.lag_s?.series.map((s) => s.channel_id)).toEqual([1, 2]);
    expect(split.heartbeat_lag_s).toMatchObject({ metric: "heartbeat_lag_s", start: 0, end: 10 });
    expect(split.heartbeat_lag_s?.series).toHaveLength(1);
  });

  it("keeps a metric asked with no series (no samples) as an empty answer", () => {
    const split = splitByMetric({ metric: "lag_s", metrics: ["lag_s", "heartbeat_lag_s"], start: 0, end: 1, series: [] });
    expect(split.heartbeat_lag_s?.series).toEqual([]);
  });

  it("reads a single-metric answer (no metrics list) and nothing", () => {
    expect(Object.keys(splitByMetric({ metric: "lag_s", start: 0, end: 1, series: [] }))).toEqual(["lag_s"]);
    expect(splitByMetric(undefined)).toEqual({});
  });
});

describe("buildExplorerModel", () => {
  it("draws a why strip per replica channel on the lag chart's range", () => {
    const causes = {
      channels: [
        channelCauses({
          channel_id: 2,
          instance_id: 3,
          replica: "replica2",
          segments: [segment({ started_at: new Date(T0 + 15_000).toISOString(), ended_at: null })],
        }),
      ],
    };
    const model = buildExplorerModel(data({ causes }), { state: fixed, nowMs: T0 + 60_000, streamed: false });
    expect(model.why.startMs).toBe(model.lag.startMs);
    expect(model.why.endMs).toBe(model.lag.endMs);
    expect(model.why.strips.map((s) => [s.label, s.segments.length])).toEqual([
      ["replica1", 0],
      ["replica2", 1],
    ]);
    const hidden = buildExplorerModel(data({ causes }), { state: { ...fixed, hidden: [2] }, nowMs: T0 + 60_000, streamed: false });
    expect(hidden.why.strips.map((s) => s.label)).toEqual(["replica1"]);
  });

  it("draws a fixed range as the lag answer says, one line per replica channel", () => {
    const model = buildExplorerModel(data(), { state: fixed, nowMs: T0 + 3_600_000, streamed: false });
    expect(model.live).toBe(false);
    expect([model.startMs, model.endMs]).toEqual([T0, T0 + 60_000]);
    expect(model.lag.lines.map((l) => l.label)).toEqual(["replica1", "replica2"]);
    expect(model.decomposition.map((p) => p.label)).toEqual(["replica1", "replica2"]);
    expect(model.channels.map((c) => [c.id, c.region])).toEqual([
      [1, "near"],
      [2, "far"],
    ]);
    expect(model.source?.name).toBe("source");
    expect(model.annotationScopes[0]).toEqual({ value: "cluster", label: "whole cluster" });
    expect(model.panels).toHaveLength(2);
  });

  it("leaves a hidden channel out of the lag and the backlog strips", () => {
    const model = buildExplorerModel(data(), { state: { ...fixed, hidden: [2] }, nowMs: T0, streamed: false });
    expect(model.lag.lines.map((l) => l.label)).toEqual(["replica1"]);
    expect(model.decomposition.map((p) => p.label)).toEqual(["replica1"]);
  });

  it("writes only for an editor", () => {
    expect(buildExplorerModel(data(), { state: fixed, nowMs: T0, streamed: false }).writable).toBe(false);
    expect(buildExplorerModel(data({ me: editor }), { state: fixed, nowMs: T0, streamed: false }).writable).toBe(true);
  });

  it("streamed: the range ends at the newest sample, and the samples extend the lag and the backlog", () => {
    const live: ExplorerState = { ...DEFAULT_STATE, range: "15m" };
    const samples = [sample(70, 1, 9), sample(71, 2, 10)];
    const model = buildExplorerModel(data({ samples }), { state: live, nowMs: T0 + 65_000, streamed: true });
    expect(model.live).toBe(true);
    expect(model.endMs).toBe(T0 + 71_001);
    expect(model.startMs).toBe(model.endMs - spanMs(live));
    const last = model.lag.rows.at(-1);
    expect(last?.t).toBe(T0 + 71_000);
    const strip = model.decomposition.find((p) => p.label === "replica1");
    expect(strip?.rows.some((r) => r.t === T0 + 70_000)).toBe(true);
  });

  it("live but not streamed: the range is the fetched one, the lag still takes the newer samples", () => {
    const live: ExplorerState = { ...DEFAULT_STATE, range: "15m", source: "best" };
    const model = buildExplorerModel(data({ samples: [sample(70, 1, 9)] }), { state: live, nowMs: T0, streamed: false });
    expect(model.endMs).toBe(T0 + 60_000);
    // The strips are not merged unless the stream feeds them.
    const strip = model.decomposition.find((p) => p.label === "replica1");
    expect(strip?.rows.some((r) => r.t === T0 + 70_000)).toBe(false);
  });
});
