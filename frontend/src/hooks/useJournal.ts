import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client";
import { resolveWindow } from "../viewmodels/timeWindow";
import { journalWindow, type JournalQuery } from "../viewmodels/journalQuery";
import { keys } from "./keys";
import { livePolling } from "./polling";

// A journal is a heavy read (every step's windows for every replica): a range that follows the
// clock refreshes every 15 s, not at the live 2 s.
const REFRESH_MS = 15_000;

/** The tuning journal of a cluster over the query's range. */
export function useJournal(clusterId: number, query: JournalQuery) {
  const window = journalWindow(query);
  return useQuery({
    queryKey: keys.journal(clusterId, query),
    queryFn: ({ signal }) => {
      const { startMs, endMs } = resolveWindow(window, Date.now());
      return unwrap(
        api.GET("/api/v1/clusters/{cluster_id}/journal", {
          params: {
            path: { cluster_id: clusterId },
            query: {
              start: new Date(startMs).toISOString(),
              end: new Date(endMs).toISOString(),
              width_s: query.widthS,
              settle_s: query.settleS,
              min_samples: query.minSamples,
              group_s: query.groupS,
            },
          },
          signal,
        }),
      );
    },
    placeholderData: (previous) => previous,
    ...(window.kind === "last" ? livePolling(REFRESH_MS) : {}),
  });
}
