// Why a replica is behind, as drawn: the why strips under the lag chart (one per replica
// channel, cause segments in words on the chart's time axis), the evidence a segment shows on
// hover or focus, and the evidence as tables (the blocking session, the transaction, the table).
// Pure: API answers in, geometry and text out. Every string here is rendered as text.
import { formatClock, formatDateTime, formatDuration } from "../format/format";
import { drawnWords } from "./catchingUp";
import { channelLabel } from "./colors";
import { evidenceGroups, evidenceValueText, type EvidenceGroup } from "./evidence";
import type { CauseSegment, ChannelCauses, CurrentCause, EvidenceValue } from "./episodeTypes";
import { MUTED as MUTED_COLOR } from "../theme/palette";

export type CauseTone = "bad" | "warn" | "muted";

// Red for what needs a person now (replication down, a session holding the applier), amber for
// load and tuning, grey for what is not a problem or not known.
const BAD = new Set(["stopped", "broken", "unreachable", "blocked_by_session"]);
const MUTED = new Set(["delayed_by_design", "unexplained", "clock_skew", "catching_up"]);

export function causeTone(cause: string): CauseTone {
  return BAD.has(cause) ? "bad" : MUTED.has(cause) ? "muted" : "warn";
}

/** Below this a finding is said to be tentative (drawn lighter, "likely" in its detail). */
export const TENTATIVE_BELOW = 0.5;
/** A segment one poll long in a day's range still gets a visible sliver (percent of the strip). */
export const MIN_WIDTH_PCT = 0.5;

// Kept here for the modules that read it from causes (it lives with the evidence tables now).
export { evidenceValueText };

export interface EvidenceItem {
  key: string;
  text: string;
}

export function evidenceItems(evidence: Readonly<Record<string, EvidenceValue>>): EvidenceItem[] {
  return Object.entries(evidence).map(([key, value]) => ({ key, text: evidenceValueText(key, value) }));
}

/** The evidence on one line: "sync_relay_log: 1; io_queueing_samples: 44". */
export function evidenceLine(evidence: Readonly<Record<string, EvidenceValue>>): string {
  return evidenceItems(evidence)
    .map((e) => `${e.key}: ${e.text}`)
    .join("; ");
}

export function confidenceText(confidence: number): string {
  const pct = Math.round(Math.min(1, Math.max(0, confidence)) * 100);
  return confidence < TENTATIVE_BELOW ? `likely (confidence ${pct} %)` : `confidence ${pct} %`;
}

/** What a segment shows on hover or focus. */
export interface CauseDetail {
  words: string;
  when: string;
  sentence: string;
  action: string;
  confidence: string;
  needs: string | null;
  evidence: EvidenceItem[];
  /** The same evidence labelled and grouped as on the episode page (session, transaction,
   * table, other), so the hover reads "session id 15", not "blocker_thread_id 15". */
  groups: EvidenceGroup[];
}

function whenText(fromMs: number, toMs: number | null, nowMs: number): string {
  const fmt = (ms: number) => (Math.abs(nowMs - ms) > 86_400_000 ? formatDateTime(ms) : formatClock(ms));
  if (toMs === null) return `since ${fmt(fromMs)} (${formatDuration(Math.max(0, nowMs - fromMs) / 1000)} so far)`;
  return `${fmt(fromMs)}–${fmt(toMs)} (${formatDuration(Math.max(0, toMs - fromMs) / 1000)})`;
}

export function causeDetail(segment: CauseSegment, nowMs: number): CauseDetail {
  const fromMs = Date.parse(segment.started_at);
  const toMs = segment.ended_at === null ? null : Date.parse(segment.ended_at);
  return {
    words: segment.words,
    when: whenText(fromMs, toMs, nowMs),
    sentence: segment.sentence,
    action: segment.action,
    confidence: confidenceText(segment.confidence),
    needs: segment.needs,
    evidence: evidenceItems(segment.evidence),
    groups: evidenceGroups(segment.evidence),
  };
}

export interface WhySegment {
  key: string;
  cause: string;
  words: string;
  tone: CauseTone;
  tentative: boolean;
  open: boolean;
  fromMs: number;
  toMs: number;
  leftPct: number;
  widthPct: number;
  /** Overlapping causes stack: 0 is the top row. */
  row: number;
  /** The accessible name: the words and when. */
  label: string;
  detail: CauseDetail;
}

export interface WhyStrip {
  channelId: number;
  label: string;
  color: string;
  rows: number;
  segments: WhySegment[];
}

export interface WhyStripsModel {
  strips: WhyStrip[];
  startMs: number;
  endMs: number;
  /** No channel has a cause in the range. */
  empty: boolean;
}

function pct(t: number, startMs: number, endMs: number): number {
  const span = endMs - startMs;
  return span > 0 ? Math.min(100, Math.max(0, ((t - startMs) / span) * 100)) : 0;
}

/** The segments of one channel on [startMs, endMs]: clipped, at least MIN_WIDTH_PCT wide,
 * overlapping ones on separate rows (first fit, in start order). An open segment runs to the
 * range's end. */
export function stripSegments(
  segments: readonly CauseSegment[],
  startMs: number,
  endMs: number,
  nowMs: number,
  keyPrefix = "",
): { rows: number; segments: WhySegment[] } {
  const drawn = segments
    .map((s, i) => {
      const from = Date.parse(s.started_at);
      const to = s.ended_at === null ? Math.max(endMs, from) : Date.parse(s.ended_at);
      return { s, i, from, to };
    })
    .filter(({ from, to }) => Number.isFinite(from) && Number.isFinite(to) && to >= startMs && from <= endMs)
    .sort((a, b) => a.from - b.from || a.i - b.i);
  const rowEnds: number[] = [];
  const out: WhySegment[] = drawn.map(({ s, i, from, to }) => {
    const fromMs = Math.max(from, startMs);
    const toMs = Math.min(to, endMs);
    let width = Math.max(pct(toMs, startMs, endMs) - pct(fromMs, startMs, endMs), MIN_WIDTH_PCT);
    width = Math.min(width, 100);
    const left = Math.min(pct(fromMs, startMs, endMs), 100 - width);
    // Rows by drawn extent, so a widened sliver does not sit on its neighbour.
    let row = rowEnds.findIndex((end) => end <= left + 1e-9);
    if (row === -1) {
      row = rowEnds.length;
      rowEnds.push(0);
    }
    rowEnds[row] = left + width;
    const detail = causeDetail(s, nowMs);
    const words = drawnWords(s.cause, s.words, s.evidence);
    return {
      key: `${keyPrefix}${s.cause}:${s.started_at}:${i}`,
      cause: s.cause,
      words,
      tone: causeTone(s.cause),
      tentative: s.confidence < TENTATIVE_BELOW,
      open: s.ended_at === null,
      fromMs,
      toMs,
      leftPct: left,
      widthPct: width,
      row,
      label: `${words}, ${detail.when}`,
      detail,
    };
  });
  return { rows: Math.max(1, rowEnds.length), segments: out };
}

export interface StripChannel {
  id: number;
  instance_id: number;
  instance: string;
  name: string;
}

export interface WhyStripsInput {
  causes: readonly ChannelCauses[] | undefined;
  /** The cluster's replica channels (status), so a channel without causes still has its strip. */
  channels: readonly StripChannel[];
  colors: ReadonlyMap<number, string>;
  hidden: readonly number[];
  startMs: number;
  endMs: number;
  nowMs: number;
}

/** One strip per replica channel shown on the lag chart, in the chart's channel order; a channel
 * the causes name that the status no longer lists (a removed replica) comes last. */
export function buildWhyStrips(input: WhyStripsInput): WhyStripsModel {
  const { causes, channels, colors, hidden, startMs, endMs, nowMs } = input;
  const byChannel = new Map((causes ?? []).map((c) => [c.channel_id, c]));
  const ordered = [...channels].sort((a, b) => a.instance_id - b.instance_id || a.name.localeCompare(b.name) || a.id - b.id);
  const known = new Set(ordered.map((c) => c.id));
  const rows: { id: number; label: string; segments: readonly CauseSegment[] }[] = [
    ...ordered.map((c) => ({
      id: c.id,
      label: channelLabel(c.instance, c.name),
      segments: byChannel.get(c.id)?.segments ?? [],
    })),
    ...(causes ?? [])
      .filter((c) => !known.has(c.channel_id))
      .map((c) => ({ id: c.channel_id, label: channelLabel(c.replica, c.channel), segments: c.segments })),
  ];
  const strips = rows
    .filter((r) => !hidden.includes(r.id))
    .map((r) => ({
      channelId: r.id,
      label: r.label,
      color: colors.get(r.id) ?? MUTED_COLOR,
      ...stripSegments(r.segments, startMs, endMs, nowMs, `${r.id}:`),
    }));
  return { strips, startMs, endMs, empty: strips.every((s) => s.segments.length === 0) };
}

/** The overview's word for a channel's current cause (the strongest), with its sentence. */
export interface CurrentCauseView {
  cause: string;
  words: string;
  sentence: string;
  tone: CauseTone;
  /** Hover text: the sentence, then the action. */
  title: string;
}

export function currentCauseView(causes: readonly CurrentCause[] | null | undefined): CurrentCauseView | null {
  const first = causes?.[0];
  if (!first) return null;
  const title = [first.sentence, first.action].filter((t) => t.trim() !== "").join(" — ");
  return {
    cause: first.cause,
    words: drawnWords(first.cause, first.words, first.evidence, true),
    sentence: first.sentence,
    tone: causeTone(first.cause),
    title: title || first.words,
  };
}
