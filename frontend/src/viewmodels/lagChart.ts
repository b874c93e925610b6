// The lag chart: one line per replica channel (and per lag source in "all"), NULL as a gap with
// its reason, a min/max band when buckets are coarse, log scale without lying about zero.
import type { Schemas } from "../api/client";
import { formatClock, formatDuration } from "../format/format";
import { verdictInfo } from "../format/verdict";
import type { MetricName } from "../api/metrics";
import { channelLabel } from "./colors";
import type { LagSourceChoice } from "./explorerState";
import { gapRanges, interpolate, withGaps, type GapPoint } from "./series";
import { MUTED } from "../theme/palette";

type SeriesResponse = Schemas["SeriesResponse"];
type VerdictsOut = Schemas["VerdictsOut"];
type ChannelStatus = Schemas["ChannelStatusOut"];

export const SOURCE_METRICS: Record<Exclude<LagSourceChoice, "all">, MetricName> = {
  best: "lag_s",
  heartbeat: "heartbeat_lag_s",
  applier: "applier_lag_s",
  server: "seconds_behind_source",
};
const SOURCE_WORDS: Record<Exclude<LagSourceChoice, "all">, string> = {
  best: "best",
  heartbeat: "heartbeat",
  applier: "applier",
  server: "server",
};
const DASHES: Record<Exclude<LagSourceChoice, "all">, string | undefined> = {
  best: undefined,
  heartbeat: "6 3",
  applier: "2 3",
  server: "10 3 2 3",
};
/** On a log axis 0 cannot be drawn: values below this are drawn here (and said so). */
export const LOG_FLOOR_S = 0.001;

export function metricsFor(source: LagSourceChoice): MetricName[] {
  return source === "all" ? Object.values(SOURCE_METRICS) : [SOURCE_METRICS[source]];
}

export interface LagLine {
  key: string;
  channelId: number;
  label: string;
  color: string;
  dash: string | undefined;
  /** Key of the [min, max] band in the rows, when drawn. */
  bandKey: string | null;
  /** The line's own points, oldest first (floored on a log scale); a null value breaks it. */
  points: LinePoint[];
}

export interface LinePoint {
  t: number;
  value: number | null;
}

export interface LagGap {
  channelId: number;
  label: string;
  color: string;
  fromMs: number;
  toMs: number;
  reason: string;
}

export type LagRow = { t: number } & Record<string, number | null | [number, number]>;

export interface LagChartModel {
  rows: LagRow[];
  lines: LagLine[];
  /** The largest value drawn (lines and bands, floored); null when none. */
  yMax: number | null;
  /** The y axis' top: yMax rounded up to a round step on a linear scale (as Recharts' "auto"
   * would), yMax itself on a log scale; null when nothing is drawn. The lines are not Recharts
   * items, so the axis cannot find it in the data. */
  yTop: number | null;
  gaps: LagGap[];
  startMs: number;
  endMs: number;
  log: boolean;
  showBand: boolean;
  empty: boolean;
  notes: string[];
}

export interface LagChartInput {
  series: Partial<Record<MetricName, SeriesResponse>>;
  channels: readonly Pick<ChannelStatus, "id" | "instance_id" | "instance" | "name" | "sql_running" | "io_running" | "verdict">[];
  colors: ReadonlyMap<number, string>;
  source: LagSourceChoice;
  hidden: readonly number[];
  log: boolean;
  verdicts?: VerdictsOut;
  pollIntervalS: number;
  startMs: number;
  endMs: number;
}

/** Why a channel has no lag over [from, to): the worst verdict the runs say, in words. */
export function gapReason(
  channel: LagChartInput["channels"][number] | undefined,
  runs: readonly { start: number; end: number; verdict: string }[],
  fromMs: number,
  toMs: number,
  endMs: number,
): string {
  const overlapping = runs.filter((r) => r.end > fromMs && r.start < toMs && r.verdict !== "caught_up");
  const ongoing = toMs >= endMs;
  const first = overlapping[0];
  if (!first) return ongoing ? "no lag value (nothing polled yet, or no lag source available)" : "no lag value (nothing polled)";
  const since = formatClock(Math.max(first.start, fromMs));
  const verdict = first.verdict as NonNullable<ChannelStatus["verdict"]>;
  if (verdict === "stopped") {
    if (ongoing && channel?.sql_running === false && channel.io_running !== false) return `SQL thread stopped since ${since}`;
    if (ongoing && channel?.io_running === false && channel.sql_running !== false) return `IO thread stopped since ${since}`;
    return ongoing ? `replication stopped since ${since}` : `replication stopped ${since}–${formatClock(toMs)}`;
  }
  const words = verdictInfo(verdict).label;
  return ongoing ? `${words} since ${since}` : `${words} ${since}–${formatClock(toMs)}`;
}

export function buildLagChartModel(input: LagChartInput): LagChartModel {
  const sources: Exclude<LagSourceChoice, "all">[] =
    input.source === "all" ? ["best", "heartbeat", "applier", "server"] : [input.source];
  const byChannel = new Map(input.channels.map((c) => [c.id, c]));
  const lines: LagLine[] = [];
  const perLine = new Map<string, GapPoint[]>();
  const gaps: LagGap[] = [];
  const notes: string[] = [];
  let coarse = false;
  const floor = (v: number | null) => (v === null ? null : input.log ? Math.max(v, LOG_FLOOR_S) : v);

  for (const source of sources) {
    const response = input.series[SOURCE_METRICS[source]];
    for (const s of response?.series ?? []) {
      if (s.channel_id === null || input.hidden.includes(s.channel_id)) continue;
      const channel = byChannel.get(s.channel_id);
      const label = channelLabel(channel?.instance ?? `instance ${s.instance_id}`, channel?.name ?? "");
      const key = `${source}:${s.channel_id}`;
      const points = withGaps(s.points, s.bucket_ms, input.pollIntervalS * 1000, input.endMs);
      coarse ||= s.bucket_ms >= 5 * input.pollIntervalS * 1000;
      perLine.set(key, points);
      const color = input.colors.get(s.channel_id) ?? MUTED;
      lines.push({
        key,
        channelId: s.channel_id,
        label: input.source === "all" ? `${label} (${SOURCE_WORDS[source]})` : label,
        color,
        dash: DASHES[source],
        bandKey: null,
        points: points.map((p) => ({ t: p.t, value: floor(p.value) })),
      });
      if (s.points.length === 0) notes.push(`${label}: no ${SOURCE_WORDS[source]} lag in this range`);
      if (source === input.source || (input.source === "all" && source === "best")) {
        const runs = input.verdicts?.channels.find((c) => c.channel_id === s.channel_id)?.runs ?? [];
        const ranges = s.points.length ? gapRanges(points, input.endMs) : [{ from: input.startMs, to: input.endMs }];
        for (const range of ranges) {
          gaps.push({
            channelId: s.channel_id,
            label,
            color,
            fromMs: range.from,
            toMs: range.to,
            reason: gapReason(channel, runs, range.from, range.to, input.endMs),
          });
        }
      }
      if (s.note && !notes.includes(s.note)) notes.push(s.note);
    }
  }

  const showBand = coarse && input.source !== "all";
  if (showBand) for (const line of lines) line.bandKey = `${line.key}:band`;

  const seen = new Set<number>();
  for (const points of perLine.values()) for (const p of points) seen.add(p.t);
  const times = [...seen].sort((a, b) => a - b);
  // Per line: its points by time, looked up once per row (20 lines × 2,000 rows stays cheap).
  const columns = lines.map((line) => {
    const points = perLine.get(line.key) ?? [];
    return { line, points, byTime: new Map(points.map((p) => [p.t, p])) };
  });
  let yMax: number | null = null;
  const higher = (v: number | null) => {
    if (v !== null && (yMax === null || v > yMax)) yMax = v;
  };
  for (const line of lines) for (const p of line.points) higher(p.value);
  const rows: LagRow[] = new Array(times.length);
  for (let r = 0; r < times.length; r += 1) {
    const t = times[r] as number;
    const row = { t } as LagRow;
    for (const { line, points, byTime } of columns) {
      const own = byTime.get(t);
      row[line.key] = floor(own ? own.value : interpolate(points, t));
      if (line.bandKey && own && own.min !== null && own.max !== null && own.value !== null) {
        row[line.bandKey] = [floor(own.min) as number, floor(own.max) as number];
        higher(floor(own.max));
      }
    }
    rows[r] = row;
  }
  if (input.log) notes.push(`log scale: values under ${formatDuration(LOG_FLOOR_S)} are drawn at ${formatDuration(LOG_FLOOR_S)}`);
  return {
    rows,
    lines,
    yMax,
    yTop: yMax === null ? null : input.log ? yMax : niceTop(yMax),
    gaps,
    startMs: input.startMs,
    endMs: input.endMs,
    log: input.log,
    showBand,
    empty: rows.length === 0,
    notes,
  };
}

/** What the tooltip says for each line at time t: its value, or why it has none. */
export function tooltipEntries(
  model: LagChartModel,
  row: LagRow | undefined,
  t: number,
): { key: string; label: string; color: string; text: string; missing: boolean }[] {
  return model.lines.map((line) => {
    const value = row?.[line.key];
    if (typeof value === "number") {
      const floored = model.log && value <= LOG_FLOOR_S;
      return { key: line.key, label: line.label, color: line.color, text: floored ? `≤ ${formatDuration(LOG_FLOOR_S)}` : formatDuration(value), missing: false };
    }
    const gap = model.gaps.find((g) => g.channelId === line.channelId && g.fromMs <= t && t < g.toMs + 1);
    return { key: line.key, label: line.label, color: line.color, text: gap ? gap.reason : "no value", missing: true };
  });
}

/** The row at exactly time t (the tooltip's label is a row's time), or undefined. */
export function rowAt(model: Pick<LagChartModel, "rows">, t: number): LagRow | undefined {
  const rows = model.rows;
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const row = rows[mid] as LagRow;
    if (row.t === t) return row;
    if (row.t < t) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** A line as one SVG path: its points through the chart's scales, "M" to start, "L" to go on.
 * A null value (or a point a scale cannot place) breaks the path: the next value starts a new
 * "M", so a gap is never bridged nor drawn at 0. Drawn as one path per line because Recharts'
 * Line builds several objects per point (20 lines × 2,000 points took most of the render). */
export function linePath(
  points: readonly LinePoint[],
  x: (t: number) => number | undefined,
  y: (value: number) => number | undefined,
): string {
  const parts: string[] = [];
  let open = false;
  for (const p of points) {
    const px = p.value === null ? undefined : x(p.t);
    const py = p.value === null ? undefined : y(p.value);
    if (px === undefined || py === undefined || !Number.isFinite(px) || !Number.isFinite(py)) {
      open = false;
      continue;
    }
    parts.push(`${open ? "L" : "M"}${round2(px)},${round2(py)}`);
    open = true;
  }
  return parts.join("");
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

/** The top of a linear axis from 0 holding `max`, on a round step (1, 2, 2.5, 5 × 10^k) for
 * about `tickCount` ticks. */
export function niceTop(max: number, tickCount = 5): number {
  if (!(max > 0)) return 1;
  const rough = max / (tickCount - 1);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= rough) ?? 10) * magnitude;
  return Number((Math.ceil(max / step - 1e-9) * step).toPrecision(12));
}
