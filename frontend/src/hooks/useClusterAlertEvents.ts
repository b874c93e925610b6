import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Alert events read for the explorer's bands: a month of a few incidents a day fits. */
export const CLUSTER_ALERT_EVENTS_LIMIT = 500;

/** One cluster's fired, repeated and resolved alert events, newest first (live). */
export function useClusterAlertEvents(clusterId: number, intervalMs: number) {
  return useQuery({
    queryKey: [...keys.alertEvents(), { clusterId, limit: CLUSTER_ALERT_EVENTS_LIMIT }] as const,
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/alerts/events", {
          params: { query: { cluster_id: clusterId, limit: CLUSTER_ALERT_EVENTS_LIMIT } },
          signal,
        }),
      ),
    ...livePolling(intervalMs),
  });
}
