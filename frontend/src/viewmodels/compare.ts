// The compare page: two lag lines on one time axis, their statistics side by side, and the
// verdict sentence. Two replicas share the clock; two windows of one replica are overlaid on
// "seconds from the window's start", so before and after are read against each other.
import type { Schemas } from "../api/client";
import { formatDateTime, formatDuration, MISSING } from "../format/format";
import { causeInfo, impactInfo, type ImpactInfo } from "../format/impact";
import { channelLabel, PALETTE } from "./colors";
import { roundPercent, roundRate, roundSeconds } from "./journal";
import { withGaps, type SeriesOut } from "./series";
import { MUTED } from "../theme/palette";

export type CompareOut = Schemas["CompareOut"];
type Side = Schemas["CompareSideOut"];

export interface CompareLine {
  key: "a" | "b";
  label: string;
  color: string;
  dashed: boolean;
  /** x: epoch ms (two replicas) or seconds from the window's start (two windows). */
  points: { x: number; y: number | null }[];
}

export interface CompareSideModel {
  key: "a" | "b";
  label: string;
  /** The column heading of this side in the statistics. */
  header: string;
  region: string;
  window: string;
  color: string;
  dashed: boolean;
}

export interface StatRow {
  label: string;
  a: string;
  b: string;
  /** b − a, or b ÷ a for rates; "" when either side is unknown. */
  change: string;
}

export interface BacklogSplit {
  key: "a" | "b";
  label: string;
  notReceived: number;
  queued: number;
  /** Shares of the larger side's total, 0–1, for bars drawn to one scale. */
  notReceivedShare: number;
  queuedShare: number;
}

export interface CompareModel {
  mode: CompareOut["mode"];
  question: string;
  sides: [CompareSideModel, CompareSideModel];
  verdict: ImpactInfo;
  sentence: string;
  rows: StatRow[];
  backlog: BacklogSplit[];
  chart: { xKind: "time" | "offset"; domain: [number, number]; lines: CompareLine[] };
}

const ms = (iso: string) => Date.parse(iso);

function sideLabel(side: Side): string {
  return channelLabel(side.channel.instance_name, side.channel.channel_name);
}

function windowText(side: Side, timeZone?: string): string {
  const start = ms(side.window.start);
  const end = ms(side.window.end);
  return `${formatDateTime(start, timeZone)} – ${formatDateTime(end, timeZone).slice(-8)} (${formatDuration((end - start) / 1000)})`;
}

function diff(a: number | null, b: number | null, unit: string, round: (v: number) => string): string {
  if (a === null || b === null) return "";
  const d = b - a;
  return `${d > 0 ? "+" : d < 0 ? "−" : "±"}${round(Math.abs(d))} ${unit}`;
}

function ratio(a: number | null, b: number | null): string {
  if (a === null || b === null || a === 0) return "";
  return `× ${(b / a).toFixed(2)}`;
}

const show = (text: string, unit: string) => (text === "" ? MISSING : `${text} ${unit}`.trim());
const roundCount = (v: number | null) => (v === null ? "" : v.toFixed(v < 10 ? 1 : 0));

function statRows(a: Side, b: Side): StatRow[] {
  const sa = a.stats;
  const sb = b.stats;
  const seconds = (label: string, pick: (s: Side["stats"]) => number | null): StatRow => ({
    label,
    a: show(roundSeconds(pick(sa)), "s"),
    b: show(roundSeconds(pick(sb)), "s"),
    change: diff(pick(sa), pick(sb), "s", (v) => roundSeconds(v)),
  });
  const rate = (label: string, pick: (s: Side["stats"]) => number | null): StatRow => ({
    label,
    a: show(roundRate(pick(sa)), "trx/s"),
    b: show(roundRate(pick(sb)), "trx/s"),
    change: ratio(pick(sa), pick(sb)),
  });
  const backlog = (label: string, pick: (s: Side["backlog"]) => number | null): StatRow => ({
    label,
    a: show(roundCount(pick(a.backlog)), "trx"),
    b: show(roundCount(pick(b.backlog)), "trx"),
    change: diff(pick(a.backlog), pick(b.backlog), "trx", (v) => roundCount(v)),
  });
  const dominant = (s: Side) => (s.backlog.dominant ? causeInfo(s.backlog.dominant).label : MISSING);
  return [
    { label: "lag samples", a: String(sa.samples), b: String(sb.samples), change: "" },
    seconds("lag p50", (s) => s.lag_p50),
    seconds("lag p95", (s) => s.lag_p95),
    seconds("lag max", (s) => s.lag_max),
    {
      label: "time caught up",
      a: show(roundPercent(sa.caught_up_share), "%"),
      b: show(roundPercent(sb.caught_up_share), "%"),
      change: "",
    },
    rate("apply rate", (s) => s.apply_rate),
    rate("source rate (load)", (s) => s.source_rate),
    backlog("not received, mean", (s) => s.not_received_mean),
    backlog("not received, p95", (s) => s.not_received_p95),
    backlog("received, not applied, mean", (s) => s.received_not_applied_mean),
    backlog("received, not applied, p95", (s) => s.received_not_applied_p95),
    { label: "most of the backlog", a: dominant(a), b: dominant(b), change: "" },
  ];
}

function backlogSplit(sides: [CompareSideModel, CompareSideModel], a: Side, b: Side): BacklogSplit[] {
  const raw = [a, b].map((s) => ({
    missing: s.backlog.not_received_mean ?? 0,
    queued: s.backlog.received_not_applied_mean ?? 0,
  }));
  const scale = Math.max(1, ...raw.map((r) => r.missing + r.queued));
  return raw.map((r, i) => ({
    key: sides[i]?.key ?? "a",
    label: sides[i]?.label ?? "",
    notReceived: r.missing,
    queued: r.queued,
    notReceivedShare: r.missing / scale,
    queuedShare: r.queued / scale,
  }));
}

function verdictOf(compare: CompareOut, sides: [CompareSideModel, CompareSideModel]): ImpactInfo {
  if (compare.mode === "windows") {
    return compare.impact ? impactInfo(compare.impact.verdict) : impactInfo("insufficient_data");
  }
  if (!compare.lagging || !compare.cause) {
    return { label: "neither is behind", icon: "✓", tone: "ok", explain: "no backlog to explain" };
  }
  const behind = compare.lagging === "a" ? sides[0] : sides[1];
  const cause = causeInfo(compare.cause);
  return { ...cause, label: `${behind.label} lags: ${cause.label}` };
}

/** Lines with explicit gaps; two windows are re-timed to seconds from their own start. */
function line(
  side: CompareSideModel,
  series: SeriesOut | undefined,
  startMs: number,
  endMs: number,
  offset: boolean,
  pollIntervalMs: number,
): CompareLine {
  const points = series ? withGaps(series.points, series.bucket_ms, pollIntervalMs, endMs) : [];
  return {
    key: side.key,
    label: side.label,
    color: side.color,
    dashed: side.dashed,
    points: points.map((p) => ({ x: offset ? (p.t - startMs) / 1000 : p.t, y: p.value })),
  };
}

export function buildCompareModel(
  compare: CompareOut,
  series: { a?: SeriesOut; b?: SeriesOut },
  colors: Map<number, string>,
  pollIntervalMs = 1000,
  timeZone?: string,
): CompareModel {
  const { a, b } = compare;
  const windows = compare.mode === "windows";
  const colorOf = (side: Side, i: number) => colors.get(side.channel.channel_id) ?? PALETTE[i] ?? PALETTE[0];
  const sides: [CompareSideModel, CompareSideModel] = windows
    ? [
        // One replica: its colour for "after" (b), a neutral dashed line for the baseline (a).
        {
          key: "a",
          label: `${sideLabel(a)} · window a (baseline)`,
          header: "window a (baseline)",
          region: a.channel.region,
          window: windowText(a, timeZone),
          color: MUTED,
          dashed: true,
        },
        {
          key: "b",
          label: `${sideLabel(b)} · window b`,
          header: "window b",
          region: b.channel.region,
          window: windowText(b, timeZone),
          color: colorOf(b, 0),
          dashed: false,
        },
      ]
    : [
        {
          key: "a",
          label: sideLabel(a),
          header: `a · ${sideLabel(a)}`,
          region: a.channel.region,
          window: windowText(a, timeZone),
          color: colorOf(a, 0),
          dashed: false,
        },
        {
          key: "b",
          label: sideLabel(b),
          header: `b · ${sideLabel(b)}`,
          region: b.channel.region,
          window: windowText(b, timeZone),
          color: colorOf(b, 1),
          dashed: false,
        },
      ];
  const spans = [a, b].map((s) => ({ startMs: ms(s.window.start), endMs: ms(s.window.end) }));
  const [spanA, spanB] = spans as [{ startMs: number; endMs: number }, { startMs: number; endMs: number }];
  const lines = [
    line(sides[0], series.a, spanA.startMs, spanA.endMs, windows, pollIntervalMs),
    line(sides[1], series.b, spanB.startMs, spanB.endMs, windows, pollIntervalMs),
  ];
  const domain: [number, number] = windows
    ? [0, Math.max(spanA.endMs - spanA.startMs, spanB.endMs - spanB.startMs) / 1000]
    : [Math.min(spanA.startMs, spanB.startMs), Math.max(spanA.endMs, spanB.endMs)];
  const question = windows
    ? `Did ${sideLabel(b)} lag less in window b than in window a?`
    : `Which replica lags, and is it the network or the apply? ${sides[0].label} vs ${sides[1].label}`;
  return {
    mode: compare.mode,
    question,
    sides,
    verdict: verdictOf(compare, sides),
    sentence: compare.conclusion,
    rows: statRows(a, b),
    backlog: backlogSplit(sides, a, b),
    chart: { xKind: windows ? "offset" : "time", domain, lines },
  };
}
