import { useQuery } from "@tanstack/react-query";
import { resolveWindow, type TimeWindow } from "../viewmodels/timeWindow";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Each replica channel's cause segments overlapping the window (the why strips). */
export function useCauses(clusterId: number, window: TimeWindow, intervalMs = 5000, enabled = true) {
  return useQuery({
    enabled,
    queryKey: [...keys.causes(clusterId), window] as const,
    queryFn: ({ signal }) => {
      const { startMs, endMs } = resolveWindow(window, Date.now());
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/causes", {
          params: {
            path: { cluster_id: clusterId },
            query: { from: new Date(startMs).toISOString(), to: new Date(endMs).toISOString() },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...(window.kind === "last" ? livePolling(intervalMs) : {}),
  });
}
