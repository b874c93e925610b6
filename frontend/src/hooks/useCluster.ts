import { queryOptions, useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";

/** The cluster query, shared by the hook and the start-up prefetch (prefetch.ts). */
export function clusterQuery(clusterId: number) {
  return queryOptions({
    queryKey: keys.cluster(clusterId),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/v1/clusters/{cluster_id}", { params: { path: { cluster_id: clusterId } }, signal })),
    staleTime: 30_000,
  });
}

export function useCluster(clusterId: number) {
  return useQuery(clusterQuery(clusterId));
}
