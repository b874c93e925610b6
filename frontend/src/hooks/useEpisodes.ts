import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { resolveWindow, type TimeWindow } from "../viewmodels/timeWindow";
import { keys } from "./keys";
import { livePolling } from "./polling";

export interface EpisodesQuery {
  window: TimeWindow;
  channelId?: number;
  limit?: number;
}

// An episode list changes when one starts or ends: a 10 s refresh keeps "ongoing" honest.
const REFRESH_MS = 10_000;

/** A cluster's lag episodes overlapping the window, newest first (GET /clusters/{id}/episodes). */
export function useEpisodes(clusterId: number, query: EpisodesQuery) {
  return useQuery({
    queryKey: keys.episodes(clusterId, query),
    queryFn: ({ signal }) => {
      const { startMs, endMs } = resolveWindow(query.window, Date.now());
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/episodes", {
          params: {
            path: { cluster_id: clusterId },
            query: {
              channel_id: query.channelId,
              limit: query.limit,
              from: new Date(startMs).toISOString(),
              to: new Date(endMs).toISOString(),
            },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...livePolling(REFRESH_MS),
  });
}
