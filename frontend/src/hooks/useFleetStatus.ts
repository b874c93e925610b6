import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** Every cluster's status and edges in one request (the overview), live. A hundred clusters
 * answer in one request every few seconds, where one status and one topology per card made 200. */
export function useFleetStatus(intervalMs = 5000) {
  return useQuery({
    queryKey: keys.fleetStatus(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/fleet/status", { signal })),
    ...livePolling(intervalMs),
  });
}
