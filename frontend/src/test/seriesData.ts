// Builders of /series answers for the view-model tests: points in seconds after T0.
import type { Schemas } from "../api/client";
import type { MetricName } from "../api/metrics";

export const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);

export type Point = Schemas["SeriesPoint"];

export const pt = (s: number, v: number): Point => ({ t: T0 + s * 1000, min: v, avg: v, max: v, last: v, n: 1 });

/** One answer: `byChannel` maps a channel id (its instance is id + 1) to its points. */
export function seriesResponse(
  metric: MetricName,
  byChannel: Record<number, Point[]>,
  { startS = 0, endS = 60, bucketMs = 1000 } = {},
): Schemas["SeriesResponse"] {
  return {
    metric,
    start: T0 + startS * 1000,
    end: T0 + endS * 1000,
    series: Object.entries(byChannel).map(([channel, points]) => ({
      channel_id: Number(channel),
      instance_id: Number(channel) + 1,
      metric,
      resolution: "raw" as const,
      bucket_ms: bucketMs,
      points,
      note: null,
    })),
  };
}
