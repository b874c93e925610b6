import { useQueries } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Status and topology of several clusters (the overview), live. */
export function useClusterStatuses(clusterIds: readonly number[]) {
  const statuses = useQueries({
    queries: clusterIds.map((id) => ({
      queryKey: keys.clusterStatus(id),
      queryFn: ({ signal }: { signal: AbortSignal }) =>
        unwrap(
          api.GET("/api/v1/clusters/{cluster_id}/status", {
            params: { path: { cluster_id: id } },
            signal,
          }),
        ),
      ...livePolling(),
    })),
  });
  const topologies = useQueries({
    queries: clusterIds.map((id) => ({
      queryKey: keys.topology(id),
      queryFn: ({ signal }: { signal: AbortSignal }) =>
        unwrap(
          api.GET("/api/v1/clusters/{cluster_id}/topology", {
            params: { path: { cluster_id: id } },
            signal,
          }),
        ),
      ...livePolling(10_000),
    })),
  });
  return { statuses, topologies };
}
