// Writes to clusters and instances, and the connection test. Every write refreshes the
// cluster list (and the views built on it).
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";

function useRefresh() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: keys.clusters() });
}

export function useCreateCluster() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (body: Schemas["ClusterIn"]) => unwrap(api.POST("/api/v1/clusters", { body })),
    onSuccess: refresh,
  });
}

export function useUpdateCluster() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["ClusterPatch"] }) =>
      unwrap(api.PATCH("/api/v1/clusters/{cluster_id}", { params: { path: { cluster_id: id } }, body })),
    onSuccess: refresh,
  });
}

export function useDeleteCluster() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/v1/clusters/{cluster_id}", { params: { path: { cluster_id: id } } })),
    onSuccess: refresh,
  });
}

export function useCreateInstance() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (body: Schemas["InstanceIn"]) => unwrap(api.POST("/api/v1/instances", { body })),
    onSuccess: refresh,
  });
}

export function useUpdateInstance() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["InstancePatch"] }) =>
      unwrap(api.PATCH("/api/v1/instances/{instance_id}", { params: { path: { instance_id: id } }, body })),
    onSuccess: refresh,
  });
}

export function useDeleteInstance() {
  const refresh = useRefresh();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/v1/instances/{instance_id}", { params: { path: { instance_id: id } } })),
    onSuccess: refresh,
  });
}

export function useConnectionTest() {
  return useMutation({
    mutationFn: (body: Schemas["ConnectionTestIn"]) => unwrap(api.POST("/api/v1/instances/test", { body })),
  });
}
