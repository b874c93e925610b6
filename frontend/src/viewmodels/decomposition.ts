// Receive vs apply: per replica channel, transactions not received yet and received but not
// applied (stacked), the verdict band under them, and the source rate against the apply rate.
import type { Schemas } from "../api/client";
import { formatClock } from "../format/format";
import { verdictInfo, type Tone } from "../format/verdict";
import { channelLabel } from "./colors";
import { mergeRows, withGaps, type Row } from "./series";
import { MUTED } from "../theme/palette";

type SeriesResponse = Schemas["SeriesResponse"];
type VerdictsOut = Schemas["VerdictsOut"];
type ChannelStatus = Schemas["ChannelStatusOut"];

export interface VerdictBandSegment {
  leftPct: number;
  widthPct: number;
  label: string;
  icon: string;
  tone: Tone;
  title: string;
}

export interface DecompositionPanel {
  channelId: number;
  label: string;
  color: string;
  /** `nr` = not received, `rna` = received, not applied (transactions). */
  rows: Row[];
  band: VerdictBandSegment[];
  empty: boolean;
}

export interface DecompositionInput {
  notReceived?: SeriesResponse;
  receivedNotApplied?: SeriesResponse;
  verdicts?: VerdictsOut;
  channels: readonly Pick<ChannelStatus, "id" | "instance" | "name">[];
  colors: ReadonlyMap<number, string>;
  hidden: readonly number[];
  pollIntervalS: number;
  startMs: number;
  endMs: number;
}

function pct(t: number, startMs: number, endMs: number): number {
  return Math.min(100, Math.max(0, ((t - startMs) / Math.max(1, endMs - startMs)) * 100));
}

export function buildVerdictBand(
  runs: readonly { start: number; end: number; verdict: NonNullable<ChannelStatus["verdict"]> }[],
  startMs: number,
  endMs: number,
): VerdictBandSegment[] {
  return runs
    .filter((r) => r.end > startMs && r.start < endMs)
    .map((r) => {
      const info = verdictInfo(r.verdict);
      const left = pct(r.start, startMs, endMs);
      return {
        leftPct: left,
        widthPct: pct(r.end, startMs, endMs) - left,
        label: info.label,
        icon: info.icon,
        tone: info.tone,
        title: `${info.label} ${formatClock(Math.max(r.start, startMs))}–${formatClock(Math.min(r.end, endMs))}: ${info.explain}`,
      };
    });
}

export function buildDecompositionModel(input: DecompositionInput): DecompositionPanel[] {
  const poll = input.pollIntervalS * 1000;
  const pick = (response: SeriesResponse | undefined, channelId: number) => {
    const s = response?.series.find((x) => x.channel_id === channelId);
    return s ? withGaps(s.points, s.bucket_ms, poll, input.endMs) : [];
  };
  return input.channels
    .filter((c) => !input.hidden.includes(c.id))
    .map((channel) => {
      const lines = new Map([
        ["nr", pick(input.notReceived, channel.id)],
        ["rna", pick(input.receivedNotApplied, channel.id)],
      ]);
      const rows = mergeRows(lines);
      const runs = input.verdicts?.channels.find((c) => c.channel_id === channel.id)?.runs ?? [];
      return {
        channelId: channel.id,
        label: channelLabel(channel.instance, channel.name),
        color: input.colors.get(channel.id) ?? MUTED,
        rows,
        band: buildVerdictBand(runs, input.startMs, input.endMs),
        empty: rows.length === 0,
      };
    });
}

export interface RateLine {
  key: string;
  label: string;
  color: string;
  dash: string | undefined;
}

export interface RateModel {
  rows: Row[];
  lines: RateLine[];
  empty: boolean;
}

/** Source rate (dashed) against each replica's apply rate (its colour), in transactions/s.
 * The source rate is the same stream for every replica: drawn once, from the first channel. */
export function buildRateModel(input: {
  sourceRate?: SeriesResponse;
  applyRate?: SeriesResponse;
  channels: readonly Pick<ChannelStatus, "id" | "instance" | "name">[];
  colors: ReadonlyMap<number, string>;
  hidden: readonly number[];
  pollIntervalS: number;
  endMs: number;
}): RateModel {
  const poll = input.pollIntervalS * 1000;
  const shown = input.channels.filter((c) => !input.hidden.includes(c.id));
  const lines: RateLine[] = [];
  const points = new Map<string, ReturnType<typeof withGaps>>();
  const firstSource = input.sourceRate?.series.find((s) => shown.some((c) => c.id === s.channel_id));
  if (firstSource) {
    points.set("source", withGaps(firstSource.points, firstSource.bucket_ms, poll, input.endMs));
    lines.push({ key: "source", label: "source writes", color: MUTED, dash: "5 3" });
  }
  for (const channel of shown) {
    const s = input.applyRate?.series.find((x) => x.channel_id === channel.id);
    if (!s) continue;
    const key = `apply:${channel.id}`;
    points.set(key, withGaps(s.points, s.bucket_ms, poll, input.endMs));
    lines.push({
      key,
      label: `${channelLabel(channel.instance, channel.name)} applies`,
      color: input.colors.get(channel.id) ?? MUTED,
      dash: undefined,
    });
  }
  const rows = mergeRows(points);
  return { rows, lines, empty: rows.length === 0 };
}
