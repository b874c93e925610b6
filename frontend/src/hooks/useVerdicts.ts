import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { resolveWindow, type TimeWindow } from "../viewmodels/timeWindow";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Each channel's verdict runs over the window (the verdict band, the reasons for gaps). */
export function useVerdicts(
  clusterId: number,
  window: TimeWindow,
  points: number,
  intervalMs?: number,
  enabled = true,
) {
  return useQuery({
    enabled,
    queryKey: [...keys.verdicts(clusterId), window, points] as const,
    queryFn: ({ signal }) => {
      const { startMs, endMs } = resolveWindow(window, Date.now());
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/verdicts", {
          params: {
            path: { cluster_id: clusterId },
            query: {
              start: new Date(startMs).toISOString(),
              end: new Date(endMs).toISOString(),
              points,
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
