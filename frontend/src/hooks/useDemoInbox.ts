import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { keys } from "./keys";
import { livePolling } from "./polling";

/** What the demo's webhook inbox received (demo mode only: the API answers 404 otherwise). */
export function useDemoInbox(enabled: boolean) {
  return useQuery({
    queryKey: keys.demoInbox(),
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/demo/inbox", { signal })),
    enabled,
    ...livePolling(5000),
  });
}
