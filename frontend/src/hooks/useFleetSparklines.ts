import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Every channel's lag over the last minutes, one dense row per channel (the overview's
 * sparklines), in one request; refreshed less often than the status. */
export function useFleetSparklines({ minutes = 15, points = 60, intervalMs = 10_000 } = {}) {
  return useQuery({
    queryKey: keys.fleetSparklines({ minutes, points }),
    queryFn: ({ signal }) =>
      unwrap(api.GET("/api/v1/fleet/sparklines", { params: { query: { minutes, points } }, signal })),
    ...livePolling(intervalMs),
  });
}
