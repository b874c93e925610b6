import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { resolveWindow, type TimeWindow } from "../viewmodels/timeWindow";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Notes overlapping the window; a live window polls. */
export function useAnnotations(clusterId: number, window: TimeWindow, intervalMs = 10_000) {
  return useQuery({
    queryKey: [...keys.annotations(clusterId), window] as const,
    queryFn: ({ signal }) => {
      const { startMs, endMs } = resolveWindow(window, Date.now());
      return unwrap(
        api.GET("/api/v1/annotations", {
          params: {
            query: {
              cluster_id: clusterId,
              start: new Date(startMs).toISOString(),
              end: new Date(endMs).toISOString(),
            },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...(window.kind === "last" ? livePolling(intervalMs) : {}),
  });
}

export function useCreateAnnotation(clusterId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["AnnotationIn"]) => unwrap(api.POST("/api/v1/annotations", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.annotations(clusterId) }),
  });
}

export function useUpdateAnnotation(clusterId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["AnnotationPatch"] }) =>
      unwrap(api.PATCH("/api/v1/annotations/{annotation_id}", { params: { path: { annotation_id: id } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.annotations(clusterId) }),
  });
}

export function useDeleteAnnotation(clusterId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/v1/annotations/{annotation_id}", { params: { path: { annotation_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.annotations(clusterId) }),
  });
}
