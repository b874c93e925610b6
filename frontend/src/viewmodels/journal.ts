// The tuning journal as the page, its chart and its exports show it. One model feeds the table,
// the CSV and the Markdown, so what is downloaded is what is on the screen: every figure is
// rounded once, here, to the text both print (the page adds the unit, the CSV does not).
import type { Schemas } from "../api/client";
import { formatClock, formatDateTime, formatParamValue, MISSING } from "../format/format";
import { impactInfo, type ImpactInfo, type ImpactVerdict } from "../format/impact";
import { channelColors, channelLabel, PALETTE } from "./colors";
import { durabilityLines, predictionLines, type PredictionLines } from "./prediction";

export type JournalOut = Schemas["JournalOut"];
export type StepOut = Schemas["StepOut"];
export type WindowStats = Schemas["WindowStatsOut"];

/** A figure before and after a step, as rounded text ("" when unknown). */
export interface FigurePair {
  before: string;
  after: string;
}

export type FigureKey = "lagP50" | "lagP95" | "lagMax" | "caughtUp" | "applyRate" | "sourceRate";

export interface FigureColumn {
  key: FigureKey;
  title: string;
  unit: string;
  /** CSV column stem: `<stem>_before_<unit>`, `<stem>_after_<unit>`. */
  csv: string;
  csvUnit: string;
}

export const FIGURES: readonly FigureColumn[] = [
  { key: "lagP50", title: "lag p50", unit: "s", csv: "lag_p50", csvUnit: "s" },
  { key: "lagP95", title: "lag p95", unit: "s", csv: "lag_p95", csvUnit: "s" },
  { key: "lagMax", title: "lag max", unit: "s", csv: "lag_max", csvUnit: "s" },
  { key: "caughtUp", title: "caught up", unit: "%", csv: "caught_up", csvUnit: "pct" },
  { key: "applyRate", title: "apply rate", unit: "trx/s", csv: "apply_rate", csvUnit: "trx_s" },
  { key: "sourceRate", title: "source rate", unit: "trx/s", csv: "source_rate", csvUnit: "trx_s" },
];

export interface JournalChannel {
  id: number;
  label: string;
  region: string;
  color: string;
}

export interface JournalCell {
  channel: JournalChannel;
  /** false: the step did not touch this replica (a control: if it moved too, the load did). */
  inScope: boolean;
  figures: Record<FigureKey, FigurePair>;
  samples: { before: number; after: number };
  verdict: ImpactVerdict;
  verdictInfo: ImpactInfo;
  reason: string;
  /** A step that changed this replica's applier workers: the capacity predicted from the
   * source's writes and the capacity measured after; null for any other step. `instance` is
   * the replica's instance name (the page's `data-channel`). */
  prediction: (PredictionLines & { instance: string }) | null;
  /** A step that relaxed this replica's flush settings: the capacity the fsync time it removes
   * predicted and the capacity measured after; null for any other step. */
  durability: (PredictionLines & { instance: string }) | null;
}

export interface JournalStep {
  /** 1-based, in time order. */
  number: number;
  atMs: number;
  /** "23 Nov 10:41:00"; `clock` is the time alone, for a table whose steps share a day. */
  when: string;
  clock: string;
  kind: StepOut["kind"];
  /** One line per instance changed ("replica1: sync_binlog 1 → 0, …") and per note. */
  what: string[];
  before: { startMs: number; endMs: number };
  after: { startMs: number; endMs: number };
  cells: JournalCell[];
}

export interface JournalModel {
  clusterId: number;
  channels: JournalChannel[];
  steps: JournalStep[];
  truncated: boolean;
  startMs: number;
  endMs: number;
  widthS: number;
}

const ms = (iso: string) => Date.parse(iso);

/** Seconds as the journal prints them: 2 decimals under 1 s, 1 under 100 s, whole beyond — the
 * API's export (journal/export.py) rounds the same way, so both say "6.9 s". */
export function roundSeconds(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "";
  const abs = Math.abs(value);
  return value.toFixed(abs < 1 ? 2 : abs < 100 ? 1 : 0);
}

/** Transactions per second: 1 decimal under 10, whole beyond. */
export function roundRate(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "";
  return value.toFixed(Math.abs(value) < 10 ? 1 : 0);
}

/** A 0–1 share as whole percent. */
export function roundPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return "";
  return (share * 100).toFixed(0);
}

function figures(before: WindowStats, after: WindowStats): Record<FigureKey, FigurePair> {
  const pair = (round: (v: number | null) => string, pick: (s: WindowStats) => number | null) => ({
    before: round(pick(before)),
    after: round(pick(after)),
  });
  return {
    lagP50: pair(roundSeconds, (s) => s.lag_p50),
    lagP95: pair(roundSeconds, (s) => s.lag_p95),
    lagMax: pair(roundSeconds, (s) => s.lag_max),
    caughtUp: pair(roundPercent, (s) => s.caught_up_share),
    applyRate: pair(roundRate, (s) => s.apply_rate),
    sourceRate: pair(roundRate, (s) => s.source_rate),
  };
}

/** "46.2 → 35.1 s"; an unknown side is an em dash. */
export function pairText(pair: FigurePair, unit: string): string {
  const side = (text: string) => text || MISSING;
  if (!pair.before && !pair.after) return MISSING;
  return `${side(pair.before)} → ${side(pair.after)} ${unit}`;
}

/** What a step changed, one line per instance (changes made together) and one per note. */
export function describeStep(step: StepOut): string[] {
  const byInstance = new Map<string, string[]>();
  for (const c of step.changes) {
    const list = byInstance.get(c.instance_name) ?? [];
    list.push(`${c.name} ${formatParamValue(c.old_value)} → ${formatParamValue(c.new_value)}`);
    byInstance.set(c.instance_name, list);
  }
  const lines = [...byInstance].map(([instance, list]) => `${instance}: ${list.join(", ")}`);
  for (const note of step.annotations) lines.push(`note: ${note.text}`);
  return lines;
}

/** Colours come from the cluster's channels when known (the same on every page), else from
 * the journal's own channel list. */
export function buildJournalModel(
  journal: JournalOut,
  colors: Map<number, string> = channelColors(
    journal.channels.map((c) => ({ id: c.channel_id, instance_id: c.instance_id, name: c.channel_name })),
  ),
  timeZone?: string,
): JournalModel {
  const channels = journal.channels.map((c, i) => ({
    id: c.channel_id,
    label: channelLabel(c.instance_name, c.channel_name),
    region: c.region,
    color: colors.get(c.channel_id) ?? PALETTE[i % PALETTE.length] ?? PALETTE[0],
  }));
  const byId = new Map(channels.map((c) => [c.id, c]));
  const steps = [...journal.steps]
    .sort((a, b) => ms(a.at) - ms(b.at))
    .map((step, index): JournalStep => {
      const atMs = ms(step.at);
      return {
        number: index + 1,
        atMs,
        when: formatDateTime(atMs, timeZone),
        clock: formatClock(atMs, timeZone),
        kind: step.kind,
        what: describeStep(step),
        before: { startMs: ms(step.before.start), endMs: ms(step.before.end) },
        after: { startMs: ms(step.after.start), endMs: ms(step.after.end) },
        cells: step.impacts.map((impact) => {
          const channel = byId.get(impact.channel.channel_id) ?? {
            id: impact.channel.channel_id,
            label: channelLabel(impact.channel.instance_name, impact.channel.channel_name),
            region: impact.channel.region,
            color: colors.get(impact.channel.channel_id) ?? PALETTE[0],
          };
          return {
            channel,
            inScope: impact.in_scope,
            figures: figures(impact.before, impact.after),
            samples: { before: impact.before.samples, after: impact.after.samples },
            verdict: impact.impact.verdict,
            verdictInfo: impactInfo(impact.impact.verdict),
            reason: impact.impact.reason,
            prediction: impact.prediction
              ? {
                  instance: impact.channel.instance_name,
                  ...predictionLines(impact.prediction, impact.before.capacity),
                }
              : null,
            durability: impact.durability
              ? {
                  instance: impact.channel.instance_name,
                  ...durabilityLines(impact.durability, impact.before.capacity),
                }
              : null,
          };
        }),
      };
    });
  return {
    clusterId: journal.cluster_id,
    channels,
    steps,
    truncated: journal.truncated,
    startMs: ms(journal.start),
    endMs: ms(journal.end),
    widthS: journal.width_s,
  };
}

// ------------------------------------------------------------------ links

/** The explorer zoomed to a step's before and after windows (its `from`/`to` parameters). */
export function explorerLink(clusterId: number, step: JournalStep): string {
  const margin = 5_000; // a little context either side, so the windows' edges are visible
  const from = Math.min(step.before.startMs, step.atMs) - margin;
  const to = Math.max(step.after.endMs, step.atMs) + margin;
  const params = new URLSearchParams({
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
  });
  return `/clusters/${clusterId}?${params.toString()}`;
}

/** The compare page on one replica: its before window (a) against its after window (b). */
export function compareStepLink(clusterId: number, step: JournalStep, channelId: number): string {
  const params = new URLSearchParams({
    channel: String(channelId),
    a_from: new Date(step.before.startMs).toISOString(),
    a_to: new Date(step.before.endMs).toISOString(),
    b_from: new Date(step.after.startMs).toISOString(),
    b_to: new Date(step.after.endMs).toISOString(),
  });
  return `/clusters/${clusterId}/compare?${params.toString()}`;
}

/** Can the compare page judge this step on a replica? Both windows must be non-empty. */
export function comparable(step: JournalStep): boolean {
  return step.before.endMs > step.before.startMs && step.after.endMs > step.after.startMs;
}

// ------------------------------------------------------------------ chart

export interface StepChartModel {
  title: string;
  unit: string;
  series: { key: string; label: string; color: string }[];
  /** One category per bar group: the baseline (before step 1), then after each step. */
  rows: { category: string; title: string; values: Record<string, number | null> }[];
  empty: boolean;
}

export const seriesKey = (channelId: number) => `c${channelId}`;

/** p95 lag per step per replica: where it started, then where each step left it. */
export function buildStepChartModel(model: JournalModel): StepChartModel {
  const series = model.channels.map((c) => ({ key: seriesKey(c.id), label: c.label, color: c.color }));
  const rows: StepChartModel["rows"] = [];
  const value = (text: string) => (text === "" ? null : Number(text));
  const first = model.steps[0];
  if (first) {
    const values: Record<string, number | null> = {};
    for (const s of series) values[s.key] = null;
    for (const cell of first.cells) values[seriesKey(cell.channel.id)] = value(cell.figures.lagP95.before);
    rows.push({ category: "before", title: "before step 1", values });
  }
  for (const step of model.steps) {
    const values: Record<string, number | null> = {};
    for (const s of series) values[s.key] = null;
    for (const cell of step.cells) values[seriesKey(cell.channel.id)] = value(cell.figures.lagP95.after);
    rows.push({ category: `step ${step.number}`, title: `after step ${step.number}: ${step.what.join("; ")}`, values });
  }
  const empty = rows.every((r) => Object.values(r.values).every((v) => v === null));
  return { title: "Did each step lower the lag? p95 lag per replica after each step", unit: "s", series, rows, empty };
}

// ------------------------------------------------------------------ exports

/** A CSV field: quoted when needed, and text a spreadsheet would run as a formula defused. */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) && !/^-?\d/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const CSV_HEADER = [
  "step",
  "at",
  "what_changed",
  "replica",
  "region",
  "in_scope",
  ...FIGURES.flatMap((f) => [`${f.csv}_before_${f.csvUnit}`, `${f.csv}_after_${f.csvUnit}`]),
  "samples_before",
  "samples_after",
  "verdict",
  "reason",
];

/** One row per step and replica, figures as the page rounds them; RFC 4180 line ends. */
export function journalCsv(model: JournalModel): string {
  const lines = [CSV_HEADER.join(",")];
  for (const step of model.steps) {
    for (const cell of step.cells) {
      const row = [
        String(step.number),
        new Date(step.atMs).toISOString(),
        step.what.join("; "),
        cell.channel.label,
        cell.channel.region,
        cell.inScope ? "yes" : "no",
        ...FIGURES.flatMap((f) => [cell.figures[f.key].before, cell.figures[f.key].after]),
        String(cell.samples.before),
        String(cell.samples.after),
        cell.verdictInfo.label,
        cell.reason,
      ];
      lines.push(row.map(csvField).join(","));
    }
  }
  return `${lines.join("\r\n")}\r\n`;
}

function mdCell(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ");
}

/** The table an engineer pastes into a ticket: one row per step, p95 per replica, verdicts of
 * the replicas the step touched. */
export function journalMarkdown(model: JournalModel, clusterName: string): string {
  const head = [
    "step",
    "when",
    "what changed",
    ...model.channels.map((c) => `${c.label}${c.region ? ` (${c.region})` : ""} lag p95`),
    "verdict",
  ];
  const lines = [
    `### Tuning journal: ${mdCell(clusterName)}`,
    "",
    `| ${head.map(mdCell).join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
  ];
  for (const step of model.steps) {
    const p95 = model.channels.map((c) => {
      const cell = step.cells.find((x) => x.channel.id === c.id);
      return cell ? pairText(cell.figures.lagP95, "s") : MISSING;
    });
    const judged = step.cells.filter((c) => c.inScope);
    const shown = judged.length ? judged : step.cells;
    const verdicts = shown.map(
      (c) => `${shown.length > 1 ? `${c.channel.label}: ` : ""}${c.verdictInfo.label} — ${c.reason}`,
    );
    const row = [String(step.number), step.when, step.what.join("; "), ...p95, verdicts.join("; ") || MISSING];
    lines.push(`| ${row.map(mdCell).join(" | ")} |`);
  }
  if (model.truncated) lines.push("", "_More steps follow; the journal was cut at the step limit._");
  return `${lines.join("\n")}\n`;
}
