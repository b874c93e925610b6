import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { resolveWindow, type TimeWindow } from "../viewmodels/timeWindow";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Parameter changes first seen in the window; a live window polls. */
export function useParamChanges(clusterId: number, window: TimeWindow, intervalMs = 5000) {
  return useQuery({
    queryKey: [...keys.paramChanges(clusterId), window] as const,
    queryFn: ({ signal }) => {
      const { startMs, endMs } = resolveWindow(window, Date.now());
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/param-changes", {
          params: {
            path: { cluster_id: clusterId },
            query: { start: new Date(startMs).toISOString(), end: new Date(endMs).toISOString() },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...(window.kind === "last" ? livePolling(intervalMs) : {}),
  });
}
