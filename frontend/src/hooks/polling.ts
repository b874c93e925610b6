// Live views poll; TanStack Query guarantees the two rules we need:
// - no overlap: an interval tick while the previous fetch of the same key is in flight joins
//   that fetch instead of starting another (query.fetch dedupes when cancelRefetch is unset);
// - paused while the tab is hidden: refetchIntervalInBackground is false, and a tab coming
//   back refetches at once (refetchOnWindowFocus) once its data is older than the interval;
// - an answer younger than the interval is fresh: a page that mounts onto it (one asked at
//   start-up, prefetch.ts) shows it and polls on, without asking the same thing again.
export const LIVE_INTERVAL_MS = 2000;

export function livePolling(intervalMs: number = LIVE_INTERVAL_MS) {
  return {
    refetchInterval: intervalMs,
    staleTime: intervalMs,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
  } as const;
}
