import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

// Worker readings arrive every poll (MySQL) or every parameter read (MariaDB, 5 s by default):
// a 10 s refresh keeps the newest bucket current without re-reading a day of readings at 2 s.
const REFRESH_MS = 10_000;

/** The heatmap of a cluster's replicas over the last `spanMs`. */
export function useApplierWorkers(clusterId: number, spanMs: number, buckets: number) {
  return useQuery({
    queryKey: keys.applierWorkers(clusterId, { spanMs, buckets }),
    queryFn: ({ signal }) => {
      const end = Date.now();
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/applier-workers", {
          params: {
            path: { cluster_id: clusterId },
            query: { start: new Date(end - spanMs).toISOString(), end: new Date(end).toISOString(), buckets },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...livePolling(REFRESH_MS),
  });
}

/** Group commit on the cluster's source over the last `spanMs`. */
export function useGroupCommit(clusterId: number, spanMs: number, points: number) {
  return useQuery({
    queryKey: keys.groupCommit(clusterId, { spanMs, points }),
    queryFn: ({ signal }) => {
      const end = Date.now();
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/group-commit", {
          params: {
            path: { cluster_id: clusterId },
            query: { start: new Date(end - spanMs).toISOString(), end: new Date(end).toISOString(), points },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...livePolling(REFRESH_MS),
  });
}
