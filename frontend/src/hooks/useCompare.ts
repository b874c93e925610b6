import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import type { CompareRequest } from "../viewmodels/compareQuery";
import { keys } from "./keys";

const iso = (ms: number) => new Date(ms).toISOString();

/** GET /compare: two replicas over one window, or one replica in two windows. */
export function useCompare(request: CompareRequest | null) {
  return useQuery({
    queryKey: keys.compare(request ?? {}),
    enabled: request !== null,
    queryFn: ({ signal }) => {
      if (request === null) throw new Error("nothing to compare");
      const query =
        request.mode === "channels"
          ? {
              channel_id: request.channelId,
              other_channel_id: request.otherId,
              start: iso(request.span.startMs),
              end: iso(request.span.endMs),
            }
          : {
              channel_id: request.channelId,
              a_start: iso(request.a.startMs),
              a_end: iso(request.a.endMs),
              b_start: iso(request.b.startMs),
              b_end: iso(request.b.endMs),
            };
      return unwrap(api.GET("/api/v1/compare", { params: { query }, signal }));
    },
    placeholderData: (previous) => previous,
  });
}
