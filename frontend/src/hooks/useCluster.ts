import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";

export function useCluster(clusterId: number) {
  return useQuery({
    queryKey: keys.cluster(clusterId),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/v1/clusters/{cluster_id}", { params: { path: { cluster_id: clusterId } }, signal })),
    staleTime: 30_000,
  });
}
