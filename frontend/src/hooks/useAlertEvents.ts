import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Alerts pending or firing now (live). */
export function useFiringAlerts(clusterId?: number) {
  return useQuery({
    queryKey: [...keys.alertFiring(), clusterId ?? null] as const,
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/v1/alerts/firing", { params: { query: { cluster_id: clusterId } }, signal })),
    ...livePolling(5000),
  });
}

/** Fired and resolved notifications, newest first (live). */
export function useAlertEvents(limit = 100) {
  return useQuery({
    queryKey: [...keys.alertEvents(), limit] as const,
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/alerts/events", { params: { query: { limit } }, signal })),
    ...livePolling(10_000),
  });
}
