// Applier workers: the API's per-bucket busy shares turned into a workers × time grid, and the
// source's group-commit figures turned into chart rows. Pure: the components derive nothing.
import type { Schemas } from "../api/client";
import { HEAT_BUSY, HEAT_IDLE, HEAT_UNKNOWN } from "../theme/palette";

type InstanceWorkers = Schemas["InstanceWorkersOut"];
type GroupCommit = Schemas["GroupCommitOut"];

export type Share = "busy" | "active";

export interface HeatCell {
  t: number;
  /** 0–1, or null: no reading in this bucket, or the server cannot tell (MySQL 5.7 busy). */
  share: number | null;
}

export interface HeatRow {
  key: string;
  label: string;
  cells: HeatCell[];
}

export interface HeatmapModel {
  title: string;
  /** e.g. "4 configured (slave_parallel_threads) · 4 seen · 1.3 busy on average". */
  summary: string;
  /** The privilege (or other) problem, in the server's words with the GRANT that fixes it. */
  problem: string | null;
  columns: number[];
  bucketMs: number;
  rows: HeatRow[];
  empty: boolean;
}

/** Bucket starts covering [start, end): the grid has a column even where nothing was read. */
export function bucketStarts(startMs: number, endMs: number, bucketMs: number, firstMs?: number): number[] {
  const origin = firstMs === undefined ? startMs : firstMs - Math.ceil((firstMs - startMs) / bucketMs) * bucketMs;
  const out: number[] = [];
  for (let t = origin; t < endMs && out.length < 5000; t += bucketMs) out.push(t);
  return out;
}

function mean(values: number[]): number | null {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
}

export function buildHeatmapModel(
  instance: InstanceWorkers,
  startMs: number,
  endMs: number,
  bucketMs: number,
  share: Share = "busy",
): HeatmapModel {
  const firstT = instance.channels.flatMap((c) => c.buckets.map((b) => b.t)).sort((a, b) => a - b)[0];
  const columns = bucketStarts(startMs, endMs, bucketMs, firstT);
  const multi = instance.channels.length > 1;
  const rows: HeatRow[] = [];
  let seen = 0;
  const perRead: number[] = [];
  for (const channel of instance.channels) {
    const byT = new Map(channel.buckets.map((b) => [b.t, b]));
    const width = Math.max(0, ...channel.buckets.map((b) => b.workers));
    seen += width;
    for (const b of channel.buckets) {
      const avg = share === "busy" ? b.busy_avg : b.active_avg;
      if (avg !== null) perRead.push(avg);
    }
    for (let i = 0; i < width; i++) {
      // MariaDB with serial apply: the SQL thread is the one applier (worker 0).
      const name = width === 1 && instance.configured_workers === 0 ? "SQL thread" : `worker ${i + 1}`;
      rows.push({
        key: `${channel.channel}/${i}`,
        label: multi ? `${channel.channel || "(default)"} · ${name}` : name,
        cells: columns.map((t) => {
          const bucket = byT.get(t);
          const values = bucket ? (share === "busy" ? bucket.busy_share : bucket.active_share) : null;
          return { t, share: values?.[i] ?? null };
        }),
      });
    }
  }
  const configured =
    instance.configured_workers === null
      ? "workers configured: unknown"
      : `${instance.configured_workers} configured${instance.configured_param ? ` (${instance.configured_param})` : ""}`;
  const average = mean(perRead);
  const summary = [
    configured,
    `${seen} seen`,
    average === null ? `${share} share unknown (MySQL 5.7 cannot tell)` : `${average.toFixed(1)} ${share} on average`,
  ].join(" · ");
  return {
    title: `${instance.instance_name}: are its workers used?`,
    summary,
    problem: instance.problem,
    columns,
    bucketMs,
    rows,
    empty: rows.length === 0,
  };
}

/** A share as a cell colour: the panel's own (idle) to the accent (always busy); grey when
 * unknown. A blend of the theme's colours, so the idle end is the dark panel in the dark theme
 * rather than a white cell. */
export function shareColor(share: number | null): string {
  if (share === null) return HEAT_UNKNOWN;
  const pct = Math.round(Math.min(1, Math.max(0, share)) * 100);
  return `color-mix(in srgb, ${HEAT_BUSY} ${pct}%, ${HEAT_IDLE})`;
}

export interface GroupCommitRow {
  t: number;
  commits: number | null;
  groups: number | null;
  perGroup: number | null;
  logFsyncs: number | null;
  dataFsyncs: number | null;
  semiSyncWaitMs: number | null;
}

export interface LaneSegment {
  startMs: number;
  endMs: number;
  value: string;
}

export interface GroupCommitModel {
  title: string;
  rows: GroupCommitRow[];
  lanes: { name: string; segments: LaneSegment[] }[];
  notes: string[];
  empty: boolean;
}

export function buildGroupCommitModel(body: GroupCommit): GroupCommitModel {
  const byT = new Map<number, GroupCommitRow>();
  const row = (t: number) => {
    let r = byT.get(t);
    if (!r) {
      r = { t, commits: null, groups: null, perGroup: null, logFsyncs: null, dataFsyncs: null, semiSyncWaitMs: null };
      byT.set(t, r);
    }
    return r;
  };
  const fill = (metric: string, set: (r: GroupCommitRow, v: number) => void) => {
    for (const p of body.series[metric]?.points ?? []) if (p.avg !== null) set(row(p.t), p.avg);
  };
  fill("binlog_commits_per_s", (r, v) => (r.commits = v));
  fill("binlog_group_commits_per_s", (r, v) => (r.groups = v));
  fill("commits_per_group", (r, v) => (r.perGroup = v));
  fill("log_fsyncs_per_s", (r, v) => (r.logFsyncs = v));
  fill("data_fsyncs_per_s", (r, v) => (r.dataFsyncs = v));
  fill("semi_sync_avg_wait_s", (r, v) => (r.semiSyncWaitMs = v * 1000));
  const rows = [...byT.values()].sort((a, b) => a.t - b.t);
  return {
    title: `${body.instance_name}: does group commit make sync_binlog=1 cheap?`,
    rows,
    lanes: body.lanes.map((lane) => ({
      name: lane.name,
      segments: lane.segments.map((s) => ({
        startMs: Date.parse(s.start),
        endMs: Date.parse(s.end),
        value: s.value ?? "—",
      })),
    })),
    notes: body.notes,
    empty: rows.length === 0,
  };
}

export interface LagStrip {
  rows: { t: number; lag: number | null }[];
  maxS: number | null;
}

/** The lag of a replica's channels (max over channels per bucket) for the strip above its heatmap. */
export function buildLagStrip(body: Schemas["SeriesResponse"] | undefined): LagStrip {
  const byT = new Map<number, number>();
  for (const series of body?.series ?? []) {
    for (const p of series.points) {
      const value = p.max ?? p.avg;
      if (value !== null) byT.set(p.t, Math.max(byT.get(p.t) ?? 0, value));
    }
  }
  const rows = [...byT.entries()].sort((a, b) => a[0] - b[0]).map(([t, lag]) => ({ t, lag }));
  return { rows, maxS: rows.length ? Math.max(...rows.map((r) => r.lag ?? 0)) : null };
}
