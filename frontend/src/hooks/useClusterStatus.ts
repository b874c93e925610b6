import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** A cluster's instances and channels as last polled; live (see polling.ts). */
export function useClusterStatus(clusterId: number, intervalMs?: number) {
  return useQuery({
    queryKey: keys.clusterStatus(clusterId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/status", {
          params: { path: { cluster_id: clusterId } },
          signal,
        }),
      ),
    ...livePolling(intervalMs),
  });
}
