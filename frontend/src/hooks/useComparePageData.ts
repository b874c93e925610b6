// Everything the compare page reads from the API, as one ComparePageData for comparePageModel:
// the cluster's status (its channels and regions), the comparison, and each side's lag line.
import { useMemo } from "react";
import { comparePicks, COMPARE_POINTS, type ComparePageData } from "../viewmodels/comparePage";
import type { CompareQuery } from "../viewmodels/compareQuery";
import { useClusterStatus } from "./useClusterStatus";
import { useCompare } from "./useCompare";
import { useSeriesList, type SeriesParams } from "./useSeries";

/** `nowMs`: where a named range ("last hour") ends (read when the page opens or on refresh). */
export function useComparePageData(clusterId: number, query: CompareQuery, nowMs: number) {
  const status = useClusterStatus(clusterId, 10_000);
  const picks = useMemo(() => comparePicks(status.data, query, nowMs), [status.data, query, nowMs]);
  const compare = useCompare(picks.request);
  // Query keys hash by value: a list rebuilt each render asks for nothing new.
  const seriesParams: SeriesParams[] = picks.series.map(({ channelId, span }) => ({
    metric: "lag_s",
    channelIds: [channelId],
    window: { kind: "fixed", startMs: span.startMs, endMs: span.endMs },
    points: COMPARE_POINTS,
  }));
  const series = useSeriesList(seriesParams, { live: false });

  const data: ComparePageData = {
    clusterId,
    query,
    status: status.data,
    picks,
    compare: compare.data,
    series: { a: series[0]?.data?.series[0], b: series[1]?.data?.series[0] },
  };
  return { status, compare, data };
}
