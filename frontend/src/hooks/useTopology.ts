import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

export function useTopology(clusterId: number) {
  return useQuery({
    queryKey: keys.topology(clusterId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/topology", {
          params: { path: { cluster_id: clusterId } },
          signal,
        }),
      ),
    ...livePolling(),
  });
}
