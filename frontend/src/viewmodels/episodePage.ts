// The whole episode page as one model: from what the API answered (EpisodePageData: the episode,
// its cluster and status, the lag over it, the parameter changes, the parallelism answer) every
// part the page renders: the facts and evidence (buildEpisodePage), the lag chart and its change
// markers, the parallelism section, and what the exports are named after. The page renders; this
// derives. useEpisodePageData asks for the series over episodeSeriesWindow.
import type { Schemas } from "../api/client";
import type { ExportName } from "../export/fileName";
import { MUTED } from "../theme/palette";
import { channelColors } from "./colors";
import type { EpisodeDetail } from "./episodeTypes";
import { buildEpisodePage, episodeWindow, type EpisodePageModel } from "./episodes";
import { buildLagChartModel, type LagChartModel } from "./lagChart";
import { buildParallelismView, type ParallelismView } from "./parallelism";
import { buildParamLanes, type ParamLanesModel } from "./paramLanes";
import type { TimeWindow } from "./timeWindow";

/** The lag over the episode: this many points. */
export const EPISODE_LAG_POINTS = 600;

export interface EpisodePageData {
  clusterId: number;
  episode: EpisodeDetail;
  cluster: Schemas["ClusterOut"] | undefined;
  status: Schemas["ClusterStatusOut"] | undefined;
  /** The status's last request failed: no drain line then (as in the explorer). */
  statusFailed: boolean;
  /** The lag of the cluster's replicas over the episode (the series answer), once read. */
  lag: Schemas["SeriesResponse"] | undefined;
  changes: readonly Schemas["ParamChangeOut"][];
  parallelism: Schemas["ParallelismOut"] | undefined;
  nowMs: number;
}

export interface EpisodePageView {
  page: EpisodePageModel;
  clusterName: string;
  chart: LagChartModel;
  markers: ParamLanesModel["markers"];
  /** Drain and relaxed-flush lines for this episode's channel only; null before the answer. */
  parallelism: ParallelismView | null;
  /** What the exports are named after (the replica, the episode's own span), without the extension. */
  exportName: Omit<ExportName, "ext">;
}

/** The window to draw: an ended episode is a fixed window; an ongoing one follows the clock, its
 * span stepping by the minute so the series' query key does not change every render. */
export function episodeSeriesWindow(episode: EpisodeDetail, nowMs: number): TimeWindow {
  const { startMs, endMs } = episodeWindow(episode, nowMs);
  if (episode.ended_at !== null) return { kind: "fixed", startMs, endMs };
  return { kind: "last", spanMs: Math.ceil((endMs - startMs) / 60_000) * 60_000 };
}

/** The cluster's replicas (instance ids): the lag's and the change markers' lanes. */
export function episodeReplicas(cluster: Pick<Schemas["ClusterOut"], "instances"> | undefined): number[] {
  return (cluster?.instances ?? []).filter((i) => i.role === "replica").map((i) => i.id);
}

export function episodePageModel(data: EpisodePageData): EpisodePageView {
  const { episode, nowMs } = data;
  const channels = data.status?.channels ?? [];
  const colors = channelColors(channels);
  // The cause strip lines up with the lag line: the lag answer's range when known.
  const drawn = data.lag ? { startMs: data.lag.start, endMs: data.lag.end } : undefined;
  const page = buildEpisodePage(episode, colors.get(episode.channel_id) ?? MUTED, nowMs, drawn);
  const { startMs, endMs } = page;
  const chart = buildLagChartModel({
    series: { lag_s: data.lag },
    channels,
    colors,
    source: "best",
    hidden: [],
    log: false,
    pollIntervalS: data.cluster?.poll_interval_s ?? 1,
    startMs,
    endMs,
  });
  const markers = buildParamLanes(data.changes, episodeReplicas(data.cluster), startMs, endMs).markers.filter(
    (m) => m.t >= startMs && m.t <= endMs,
  );
  const parallelism = data.parallelism
    ? buildParallelismView(data.parallelism, { nowMs, channels: data.statusFailed ? [] : channels, channelId: page.channelId })
    : null;
  const clusterName = data.cluster?.name ?? `cluster ${data.clusterId}`;
  return {
    page,
    clusterName,
    chart,
    markers,
    parallelism,
    exportName: {
      what: `episode-${page.id}`,
      cluster: clusterName,
      replicas: [page.row.replica],
      fromMs: page.episodeFromMs,
      toMs: page.episodeToMs,
    },
  };
}
