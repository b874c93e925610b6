// Shared series plumbing: buckets from GET /series become points with explicit gaps.
import type { Schemas } from "../api/client";
import type { MetricName } from "../api/metrics";

type SeriesResponse = Schemas["SeriesResponse"];

// Reached through SeriesResponse: the component name may be qualified when another schema
// module defines a SeriesOut too (FastAPI then prefixes both with their module path).
export type SeriesOut = Schemas["SeriesResponse"]["series"][number];
export type SeriesPoint = SeriesOut["points"][number];

export interface GapPoint {
  t: number;
  /** null: no value here (the line breaks). */
  value: number | null;
  min: number | null;
  max: number | null;
}

/** The largest distance between two buckets still drawn as one line: buckets are left out when
 * they hold no value (a NULL lag), so a longer step is a gap, never interpolated. Polls come
 * every ``pollIntervalMs``; a bucket narrower than that is often empty without meaning NULL. */
export function gapThresholdMs(bucketMs: number, pollIntervalMs: number): number {
  return Math.max(2.5 * bucketMs, 3 * pollIntervalMs);
}

/** Points oldest first, with a null point inserted wherever the series has no value, including
 * a trailing null when the series stops before ``endMs`` (a replica that stopped now). */
export function withGaps(
  points: readonly SeriesPoint[],
  bucketMs: number,
  pollIntervalMs: number,
  endMs?: number,
  pick: (p: SeriesPoint) => number | null = (p) => p.avg,
): GapPoint[] {
  const limit = gapThresholdMs(bucketMs, pollIntervalMs);
  const out: GapPoint[] = [];
  let previous: number | null = null;
  for (const p of points) {
    const value = pick(p);
    if (previous !== null && p.t - previous > limit) {
      out.push({ t: previous + bucketMs, value: null, min: null, max: null });
    }
    out.push({ t: p.t, value, min: p.min, max: p.max });
    previous = p.t;
  }
  if (previous !== null && endMs !== undefined && endMs - previous > limit + bucketMs) {
    out.push({ t: previous + bucketMs, value: null, min: null, max: null });
  }
  return out;
}

/** Time ranges [from, to) in which a series has no value (for hover reasons and shading). */
export function gapRanges(points: readonly GapPoint[], endMs: number): { from: number; to: number }[] {
  const ranges: { from: number; to: number }[] = [];
  for (let i = 0; i < points.length; i += 1) {
    const p = points[i];
    if (p && p.value === null) {
      const next = points.slice(i + 1).find((q) => q.value !== null);
      ranges.push({ from: p.t, to: next ? next.t : endMs });
    }
  }
  return ranges;
}

/** A line's value at ``t`` between two of its points (linear), only inside a continuous
 * stretch: never across a gap, never beyond its ends. Lines share rows in a chart, and a row
 * one line has must not break another line that simply has no bucket there. */
export function interpolate(points: readonly GapPoint[], t: number): number | null {
  let lo = 0;
  let hi = points.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const p = points[mid] as GapPoint;
    if (p.t < t) lo = mid + 1;
    else hi = mid - 1;
  }
  const at = points[lo];
  if (at && at.t === t) return at.value;
  const before = points[lo - 1];
  if (!before || !at || before.value === null || at.value === null) return null;
  return before.value + ((at.value - before.value) * (t - before.t)) / (at.t - before.t);
}

export type Row = { t: number } & Record<string, number | null>;

/** Lines (key → points) into chart rows on the union of their times. */
export function mergeRows(lines: ReadonlyMap<string, readonly GapPoint[]>): Row[] {
  const times = [...new Set([...lines.values()].flatMap((points) => points.map((p) => p.t)))].sort((a, b) => a - b);
  return times.map((t) => {
    const row = { t } as Row;
    for (const [key, points] of lines) row[key] = interpolate(points, t);
    return row;
  });
}

/** One several-metric answer as the per-metric answers the charts read (one request each, before). */
export function splitByMetric(body: SeriesResponse | undefined): Partial<Record<MetricName, SeriesResponse>> {
  if (!body) return {};
  const metrics = body.metrics?.length ? body.metrics : [body.metric];
  const out: Partial<Record<MetricName, SeriesResponse>> = {};
  for (const metric of metrics) {
    out[metric] = { ...body, metric, metrics: [metric], series: body.series.filter((s) => s.metric === metric) };
  }
  return out;
}
