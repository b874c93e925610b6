import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { channelOptions } from "../viewmodels/scope";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** A cluster's channels (from its status, shared with the live views' cache) for pickers; null:
 * no cluster chosen, nothing fetched. Refreshed slowly: a form needs new channels, not lag. */
export function useClusterChannels(clusterId: number | null) {
  return useQuery({
    queryKey: keys.clusterStatus(clusterId ?? 0),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/status", {
          params: { path: { cluster_id: clusterId ?? 0 } },
          signal,
        }),
      ),
    enabled: clusterId !== null,
    select: channelOptions,
    ...livePolling(30_000),
  });
}
