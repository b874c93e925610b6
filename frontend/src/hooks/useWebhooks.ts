import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

export function useWebhooks() {
  return useQuery({
    queryKey: keys.webhooks(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/alerts/webhooks", { signal })),
  });
}

export function useCreateWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["WebhookIn"]) => unwrap(api.POST("/api/v1/alerts/webhooks", { body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.webhooks() }),
  });
}

/** Change a target: a URL is replaced by sending the whole new one (the stored URL is never
 * read back); omitted fields stay. */
export function useUpdateWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number; body: Schemas["WebhookPatch"] }) =>
      unwrap(api.PATCH("/api/v1/alerts/webhooks/{target_id}", { params: { path: { target_id: id } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.webhooks() }),
  });
}

/** One made-up firing alert, sent now; the attempt lands in the delivery log. */
export function useSendTestWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/v1/alerts/webhooks/{target_id}/test", { params: { path: { target_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.deliveries() }),
  });
}

/** Every delivery with every attempt (live: retries land while you look). */
export function useDeliveries(limit = 50) {
  return useQuery({
    queryKey: [...keys.deliveries(), limit] as const,
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/alerts/deliveries", { params: { query: { limit } }, signal })),
    ...livePolling(5000),
  });
}
