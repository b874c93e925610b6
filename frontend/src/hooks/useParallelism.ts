import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Every 60 s: the API samples the source's binlog every 5 minutes, so a minute shows a new
 * window soon enough without asking twelve times for the same one. */
export const PARALLELISM_INTERVAL_MS = 60_000;

/** What the source's writes allow a parallel applier (the newest binlog window, simulated for
 * 1…16 workers); polled slowly and not while the tab is hidden (see polling.ts). */
export function useParallelism(clusterId: number) {
  return useQuery({
    queryKey: keys.parallelism(clusterId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/parallelism", {
          params: { path: { cluster_id: clusterId } },
          signal,
        }),
      ),
    ...livePolling(PARALLELISM_INTERVAL_MS),
  });
}
