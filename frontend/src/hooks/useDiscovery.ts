// Replica discovery: ask a cluster's source for its replicas (a POST: it connects to the
// server, and nothing is cached), and add one with the source's login. Adding refreshes the
// cluster list, which marks the added proposal as monitored.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";

export function useDiscoverReplicas() {
  return useMutation({
    mutationFn: (clusterId: number) =>
      unwrap(api.POST("/api/v1/clusters/{cluster_id}/discover", { params: { path: { cluster_id: clusterId } } })),
  });
}

export function useAddDiscoveredReplica() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ clusterId, body }: { clusterId: number; body: Schemas["DiscoveredReplicaIn"] }) =>
      unwrap(
        api.POST("/api/v1/clusters/{cluster_id}/discovered-replicas", {
          params: { path: { cluster_id: clusterId } },
          body,
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.clusters() }),
  });
}
