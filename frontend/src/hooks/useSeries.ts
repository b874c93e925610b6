import { useQueries, useQuery } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "../api/client";
import type { MetricName } from "../api/metrics";
import { splitByMetric } from "../viewmodels/series";
import { resolveWindow, type TimeWindow } from "../viewmodels/timeWindow";
import { keys } from "./keys";
import { livePolling } from "./polling";

export type { MetricName };

export interface SeriesParams {
  metric: MetricName;
  channelIds?: readonly number[];
  instanceIds?: readonly number[];
  window: TimeWindow;
  points: number;
}

/** Several metrics of the same channels or instances: one request (`metric` repeated). */
export interface SeriesGroupParams extends Omit<SeriesParams, "metric"> {
  metrics: readonly MetricName[];
}

export function fetchSeries(params: SeriesParams | SeriesGroupParams, signal?: AbortSignal) {
  const { startMs, endMs } = resolveWindow(params.window, Date.now());
  return unwrap(
    api.GET("/api/v1/series", {
      params: {
        query: {
          metric: "metrics" in params ? [...params.metrics] : [params.metric],
          channel_id: [...(params.channelIds ?? [])],
          instance_id: [...(params.instanceIds ?? [])],
          start: Math.floor(startMs),
          end: Math.ceil(endMs),
          points: params.points,
        },
      },
      signal,
    }),
  );
}

function options(params: SeriesParams | SeriesGroupParams, live: boolean, enabled: boolean, intervalMs?: number) {
  const none = (!params.channelIds?.length && !params.instanceIds?.length) || ("metrics" in params && !params.metrics.length);
  return {
    queryKey: keys.series(params),
    queryFn: ({ signal }: { signal: AbortSignal }) => fetchSeries(params, signal),
    enabled: enabled && !none,
    placeholderData: (previous: Schemas["SeriesResponse"] | undefined) => previous,
    ...(live && params.window.kind === "last" ? livePolling(intervalMs) : {}),
  };
}

/** One metric of some channels or instances; live windows ("last 15 m") poll. */
export function useSeries(params: SeriesParams, { live = true, enabled = true } = {}) {
  return useQuery(options(params, live, enabled));
}

/** Several series queries at once (e.g. one sparkline query per cluster). */
export function useSeriesList(
  list: readonly SeriesParams[],
  {
    live = true,
    intervalMs,
    enabled = true,
    intervalFor,
  }: {
    live?: boolean;
    intervalMs?: number;
    enabled?: boolean;
    /** A query's own interval (e.g. a metric the live stream feeds polls rarely); undefined: intervalMs. */
    intervalFor?: (params: SeriesParams) => number | undefined;
  } = {},
) {
  return useQueries({
    queries: list.map((params) => ({
      ...options(params, live, enabled, intervalFor?.(params) ?? intervalMs),
      placeholderData: undefined,
    })),
  });
}

/** A series group's query as the hook asks it (same key, same fetch), for a prefetch. */
export function seriesGroupQuery(params: SeriesGroupParams) {
  return { queryKey: keys.series(params), queryFn: ({ signal }: { signal: AbortSignal }) => fetchSeries(params, signal) };
}

/**
 * Several metrics in one request, answered per metric (as one request per metric did); live
 * windows poll. The explorer asks three of these per refresh: the lag, the strips, the panels.
 */
export function useSeriesGroup(
  params: SeriesGroupParams,
  { live = true, intervalMs, enabled = true }: { live?: boolean; intervalMs?: number; enabled?: boolean } = {},
) {
  return useQuery({
    ...options(params, live, enabled, intervalMs),
    placeholderData: undefined,
    select: splitByMetric,
  });
}
