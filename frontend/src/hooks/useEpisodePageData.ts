// Everything the episode page reads from the API, as one EpisodePageData for episodePageModel:
// the episode, its cluster and status, the lag of the cluster's replicas over it, the parameter
// changes in that window, and the parallelism answer (the episode's own cluster).
import { useMemo } from "react";
import { EPISODE_LAG_POINTS, episodeReplicas, episodeSeriesWindow, type EpisodePageData } from "../viewmodels/episodePage";
import { useCluster } from "./useCluster";
import { useClusterStatus } from "./useClusterStatus";
import { useEpisode } from "./useEpisode";
import { useNow } from "./useNow";
import { useParallelism } from "./useParallelism";
import { useParamChanges } from "./useParamChanges";
import { useSeriesList, type SeriesParams } from "./useSeries";

export function useEpisodePageData(clusterId: number, episodeId: number) {
  const episode = useEpisode(episodeId);
  const cluster = useCluster(clusterId);
  const status = useClusterStatus(clusterId, 10_000);
  const nowMs = useNow(5000);
  const detail = episode.data;
  // The episode's cluster (the URL's until the episode is read: the same query in the usual case).
  const parallelism = useParallelism(detail?.cluster_id ?? clusterId);
  const window = useMemo(() => (detail ? episodeSeriesWindow(detail, nowMs) : null), [detail, nowMs]);
  const replicas = useMemo(() => episodeReplicas(cluster.data), [cluster.data]);
  const asks = useMemo<SeriesParams[]>(
    () => (window ? [{ metric: "lag_s", instanceIds: replicas, window, points: EPISODE_LAG_POINTS }] : []),
    [window, replicas],
  );
  const [lag] = useSeriesList(asks, { intervalMs: 5000 });
  const changes = useParamChanges(clusterId, window ?? { kind: "last", spanMs: 60_000 });

  const data: EpisodePageData | undefined = detail
    ? {
        clusterId,
        episode: detail,
        cluster: cluster.data,
        status: status.data,
        statusFailed: Boolean(status.error),
        lag: lag?.data,
        changes: changes.data ?? [],
        parallelism: parallelism.data,
        nowMs,
      }
    : undefined;

  return { episode, data, lag, parallelism };
}
