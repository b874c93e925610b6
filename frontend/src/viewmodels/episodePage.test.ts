import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { episodeDetail, iso, T0 } from "../test/episodesData";
import { change } from "../test/journalData";
import { pt, seriesResponse } from "../test/seriesData";
import { channelStatus, clusterOut } from "../test/statusData";
import { episodePageModel, episodeReplicas, episodeSeriesWindow, type EpisodePageData } from "./episodePage";

const status = {
  cluster_id: 1,
  name: "demo",
  channels: [channelStatus({ id: 1, instance_id: 2, instance: "replica1" }), channelStatus({ id: 2, instance_id: 3, instance: "replica2" })],
  instances: [],
} as unknown as Schemas["ClusterStatusOut"];

const parallelism: Schemas["ParallelismOut"] = {
  source: null,
  sampled_at: null,
  transactions: 0,
  groups: 0,
  mean_group_size: 0,
  conservative: [],
  optimistic: [],
  cores: null,
  problem: "no REPLICATION CLIENT privilege",
};

function data(over: Partial<EpisodePageData> = {}): EpisodePageData {
  return {
    clusterId: 1,
    episode: episodeDetail(),
    cluster: clusterOut(),
    status,
    statusFailed: false,
    // The lag over the episode's window (5 minutes, a minute either side).
    lag: seriesResponse("lag_s", { 1: [pt(0, 1), pt(200, 48.3)], 2: [pt(0, 0.1), pt(200, 0.2)] }, { startS: -60, endS: 360 }),
    changes: [],
    parallelism: undefined,
    nowMs: T0 + 3_600_000,
    ...over,
  };
}

describe("episodeSeriesWindow", () => {
  it("is fixed for an ended episode and follows the clock by whole minutes while ongoing", () => {
    expect(episodeSeriesWindow(episodeDetail(), T0 + 3_600_000)).toEqual({ kind: "fixed", startMs: T0 - 60_000, endMs: T0 + 360_000 });
    const ongoing = episodeSeriesWindow(episodeDetail({ ended_at: null }), T0 + 90_500);
    expect(ongoing.kind).toBe("last");
    expect(ongoing.kind === "last" ? ongoing.spanMs % 60_000 : -1).toBe(0);
  });
});

describe("episodeReplicas", () => {
  it("lists the cluster's replicas, not its source", () => {
    expect(episodeReplicas(clusterOut())).toEqual([2, 3]);
    expect(episodeReplicas(undefined)).toEqual([]);
  });
});

describe("episodePageModel", () => {
  it("builds the facts, the chart on the lag's drawn range and the export name", () => {
    const view = episodePageModel(data());
    expect(view.page.id).toBe(11);
    expect(view.page.startMs).toBe(T0 - 60_000);
    expect(view.page.endMs).toBe(T0 + 360_000);
    expect(view.chart.lines.length).toBeGreaterThan(0);
    expect(view.clusterName).toBe("demo");
    expect(view.parallelism).toBeNull();
    expect(view.markers).toEqual([]);
    expect(view.exportName).toEqual({
      what: "episode-11",
      cluster: "demo",
      replicas: ["replica1"],
      fromMs: view.page.episodeFromMs,
      toMs: view.page.episodeToMs,
    });
  });

  it("names the cluster by its id before the cluster is read", () => {
    expect(episodePageModel(data({ cluster: undefined, clusterId: 7 })).clusterName).toBe("cluster 7");
  });

  it("marks only the parameter changes inside the drawn window", () => {
    const inside = change({ id: 1, first_new_at: iso(T0 + 100_000), last_old_at: iso(T0 + 99_000) });
    const outside = change({ id: 2, first_new_at: iso(T0 + 3_000_000), last_old_at: iso(T0 + 2_999_000) });
    const view = episodePageModel(data({ changes: [inside, outside] }));
    expect(view.markers.length).toBe(1);
    expect(view.markers.every((m) => m.t >= view.page.startMs && m.t <= view.page.endMs)).toBe(true);
  });

  it("shows the parallelism answer once read", () => {
    const view = episodePageModel(data({ parallelism }));
    expect(view.parallelism?.kind).toBe("none");
  });
});
