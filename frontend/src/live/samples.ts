// Streamed samples meet fetched series: the explorer fetches a live window once (buckets from
// GET /series) and then follows the right edge with the samples the stream sends, folded into
// the same epoch-aligned buckets the server uses, so the newest part of the chart looks like a
// fetched one and nothing re-fetches the whole range every tick. Pure functions only.
import type { Schemas } from "../api/client";

type SeriesResponse = Schemas["SeriesResponse"];
type SeriesPoint = SeriesResponse["series"][number]["points"][number];

/** One `sample` event of GET /stream (SampleEventOut). */
export interface LiveSample {
  channel_id: number;
  /** epoch milliseconds */
  ts: number;
  lag_s: number | null;
  not_received: number | null;
  received_not_applied: number | null;
}

/** The metrics a sample carries, by the series metric name. */
export const STREAMED_METRICS = ["lag_s", "not_received", "received_not_applied"] as const;
export type StreamedMetric = (typeof STREAMED_METRICS)[number];

export function isStreamed(metric: string): metric is StreamedMetric {
  return (STREAMED_METRICS as readonly string[]).includes(metric);
}

const num = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const numOrNull = (v: unknown): number | null => (num(v) ? v : null);

/** A sample event's data, or null when it is not one (a newer server may send more fields). */
export function parseSample(data: string): LiveSample | null {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (!value || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  if (!num(v.channel_id) || !num(v.ts)) return null;
  return {
    channel_id: v.channel_id,
    ts: v.ts,
    lag_s: numOrNull(v.lag_s),
    not_received: numOrNull(v.not_received),
    received_not_applied: numOrNull(v.received_not_applied),
  };
}

/** The buffer with the new samples: one per channel and time (a resumed stream may send a
 * sample again), oldest first, none older than ``keepFromMs``. Unchanged input → same array. */
export function appendSamples(buffer: readonly LiveSample[], incoming: readonly LiveSample[], keepFromMs: number): readonly LiveSample[] {
  const seen = new Set(buffer.map((s) => `${s.channel_id}:${s.ts}`));
  const added: LiveSample[] = [];
  for (const s of incoming) {
    const key = `${s.channel_id}:${s.ts}`;
    if (seen.has(key) || s.ts < keepFromMs) continue;
    seen.add(key);
    added.push(s);
  }
  const kept = buffer[0] && buffer[0].ts < keepFromMs ? buffer.filter((s) => s.ts >= keepFromMs) : buffer;
  if (added.length === 0) return kept;
  const merged = [...kept, ...added];
  // Samples come nearly in order: sort only when they do not.
  if (merged.some((s, i) => i > 0 && s.ts < (merged[i - 1] as LiveSample).ts)) merged.sort((a, b) => a.ts - b.ts);
  return merged;
}

/** One more value into a bucket, as the server would have counted it. A statistic the fetched
 * bucket came without (a rollup that keeps no min) stays without: half a minimum would lie. */
function addTo(point: SeriesPoint, value: number): SeriesPoint {
  const n = point.n + 1;
  const kept = (stat: number | null, next: (s: number) => number) => (stat === null ? (point.n > 0 ? null : value) : next(stat));
  return {
    t: point.t,
    n,
    avg: kept(point.avg, (avg) => avg + (value - avg) / n),
    min: kept(point.min, (min) => Math.min(min, value)),
    max: kept(point.max, (max) => Math.max(max, value)),
    last: value,
  };
}

/**
 * The fetched series followed by the streamed samples the fetch did not cover (``ts`` at or
 * after its ``end``), folded into its buckets (aligned on the epoch, ``bucket_ms`` wide, the
 * fetched newest bucket topped up), with buckets wholly before ``startMs`` dropped. A sample
 * without a value adds nothing, as the server leaves such buckets out (the line gaps). The
 * response's range becomes [startMs, max(end, endMs)).
 */
export function mergeSamples(
  response: SeriesResponse | undefined,
  samples: readonly LiveSample[],
  metric: StreamedMetric,
  startMs: number,
  endMs: number,
): SeriesResponse | undefined {
  if (!response) return response;
  const fetchedEnd = response.end;
  const fresh = samples.filter((s) => s.ts >= fetchedEnd && s.ts < endMs && s[metric] !== null);
  if (fresh.length === 0 && response.start >= startMs) return response;
  const series = response.series.map((s) => {
    const bucket = Math.max(1, s.bucket_ms);
    const points = s.points.filter((p) => p.t + bucket > startMs);
    for (const sample of fresh) {
      if (sample.channel_id !== s.channel_id) continue;
      const t = Math.floor(sample.ts / bucket) * bucket;
      const last = points.at(-1);
      const value = sample[metric] as number;
      if (last && last.t === t) points[points.length - 1] = addTo(last, value);
      else if (!last || last.t < t) points.push(addTo({ t, n: 0, avg: null, min: null, max: null, last: null }, value));
      // An older bucket than the newest one is already counted by the fetch: left alone.
    }
    return points.length === s.points.length && points.every((p, i) => p === s.points[i]) ? s : { ...s, points };
  });
  return { ...response, series, start: Math.max(response.start, startMs), end: Math.max(fetchedEnd, endMs) };
}
