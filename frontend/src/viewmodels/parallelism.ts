// "Parallel apply (predicted)", in the explorer's side panel and on the episode page: how much of
// the source's write stream a replica could apply at once, from the newest window of the source's
// binlog (the API simulates 1…16 workers under the commit-parent rule), in words and a small table;
// and, for replicas behind with strict flush settings, what relaxing them is predicted to give.
import type { Schemas } from "../api/client";
import { formatAgo, formatCount, formatDuration } from "../format/format";
import { CAPPED_NOTE, capacityText, formatSpeedup, perTrxMs } from "./capacity";
import { channelLabel } from "./colors";

export { formatSpeedup };

type Parallelism = Schemas["ParallelismOut"];
type Speedup = Schemas["SpeedupOut"];
type ChannelStatus = Schemas["ChannelStatusOut"];
type DurabilityNow = Schemas["DurabilityNowOut"];
type DurabilityPrediction = Schemas["DurabilityPredictionOut"];

/** The table's rows: doubling workers is how an operator tries them (1 is the serial baseline). */
export const SHOWN_WORKERS = [1, 2, 4, 8, 16] as const;
/** The headline's worker count: a common first step from serial apply. */
export const HEADLINE_WORKERS = 4;
export const NO_SAMPLE_TEXT =
  "No sample of the source's binlog yet (every 5 min; a MySQL source needs REPLICATION SLAVE for it)";
/** Said once under the relaxed-flush lines (the API's relaxed settings: the demo's phase B). */
export const DURABILITY_CAVEAT =
  "Relaxed flush trades durability: a crash may lose up to a second of redo log and relay-log positions (a GTID replica re-fetches them).";

/** The API's speed-ups are the stream's; a replica with C cores applies at most ~C× of them
 * (`cores`: LAGSCOPE_REPLICA_CORES, null when not configured). */
export function caveatText(cores: number | null): string {
  if (cores === null) {
    return "Not capped by the replica's cores (LAGSCOPE_REPLICA_CORES is not set): C cores apply at most ~C×.";
  }
  return `Capped by the replica's cores: on ${cores} ${cores === 1 ? "core" : "cores"} at most ~${cores}×.`;
}

export interface ParallelismRow {
  workers: number;
  conservative: string;
  optimistic: string;
}

/** One replica channel's backlog, drained with the headline's workers (apply-bound channels only). */
export interface DrainLine {
  channelId: number;
  label: string;
  text: string;
}

/** One replica channel behind with strict flush settings: what relaxing them would give now. */
export interface DurabilityLine {
  channelId: number;
  label: string;
  text: string;
}

/** The relaxed-flush lines do not need the source's binlog: both kinds carry them. */
interface DurabilityPart {
  durability: DurabilityLine[];
  /** `DURABILITY_CAVEAT` when there is a line, else null. */
  durabilityCaveat: string | null;
}

export type ParallelismView =
  | ({ kind: "none"; text: string; caveat: string } & DurabilityPart)
  | ({
      kind: "sampled";
      rows: ParallelismRow[];
      /** null when the answer lacks the headline's worker count. */
      headline: string | null;
      groupSize: string;
      sample: string;
      caveat: string;
      drains: DrainLine[];
    } & DurabilityPart);

function speedupAt(speedups: readonly Speedup[], workers: number): number | null {
  return speedups.find((s) => s.workers === workers)?.speedup ?? null;
}

/**
 * "with 4 workers: ~2.0× apply capacity, enough to drain this backlog in ~42 s", for a channel
 * that is apply-bound now (receive-bound: more workers do not bring the missing events; caught
 * up: no backlog). Capacity = its apply rate × min(speed-up, cores) (cores null: not capped
 * by them); the source keeps writing,
 * so the backlog shrinks at capacity − source rate. null: not apply-bound, or a rate unknown.
 */
export function drainText(channel: ChannelStatus, speedup: number | null, cores: number | null): string | null {
  const { verdict, trx_behind: behind, apply_rate: apply, source_rate: source } = channel;
  if (verdict !== "apply_bound" || speedup === null) return null;
  if (behind === null || behind <= 0 || apply === null || apply <= 0 || source === null) return null;
  const factor = cores === null ? speedup : Math.min(speedup, cores);
  const prefix = `with ${HEADLINE_WORKERS} workers: ~${formatSpeedup(factor)} apply capacity`;
  const shrinking = apply * factor - source;
  // Equal rates differ in a float's last bits; that is no headway (nor an ETA of 10¹¹ days).
  if (shrinking <= 1e-9 * Math.max(1, source)) return `${prefix}, not enough to drain this backlog (the source writes as fast)`;
  const seconds = behind / shrinking;
  return `${prefix}, enough to drain this backlog in ~${formatDuration(seconds < 10 ? seconds : Math.round(seconds))}`;
}

type Removed = DurabilityPrediction["removed"][number];
const REMOVED_WORDS: Record<Removed["what"], string> = {
  "redo log fsync": "fsyncs",
  "binary log fsync": "fsyncs",
  "relay-log wait": "relay-log waits",
};

/** "fsyncs and relay-log waits", "fsyncs", "relay-log waits": the removed parts' kinds, in the
 * order they come. */
function removedWords(removed: readonly Removed[]): string {
  return [...new Set(removed.map((r) => REMOVED_WORDS[r.what]))].join(" and ");
}

/**
 * "relaxing sync_binlog 1 → 0, …: ~5.2× apply capacity (~2,692 trx/s from 520 now); its fsyncs
 * and relay-log waits are 1.42 ms of its 1.76 ms per transaction", looking forward (the journal's
 * `durabilityLines` checks a change made against what was measured after it). A capped factor
 * says so (CAPPED_NOTE); the capacity now is predicted ÷ factor. No prediction:
 * why; parts not priced are said after the figures.
 */
export function durabilityNowText(p: DurabilityPrediction): string {
  const head = `relaxing ${p.settings.join(", ")}`;
  const why = p.unknown.join("; ");
  if (p.predicted === null) return `${head}: no prediction${why ? ` (${why})` : ""}`;
  const now = p.factor !== null && p.factor > 0 ? ` from ${capacityText(p.predicted / p.factor)} now` : "";
  const capacity = `~${capacityText(p.predicted)} trx/s${now}`;
  let text = `${head}: ~${formatSpeedup(p.factor)} apply capacity (${capacity})`;
  if (p.removed.length) {
    const removed = p.removed.reduce((sum, r) => sum + r.s_per_trx, 0);
    const of = p.applier_s_per_trx === null ? "" : ` of its ${perTrxMs(p.applier_s_per_trx)}`;
    text += `; its ${removedWords(p.removed)} are ${perTrxMs(removed)}${of} per transaction`;
  }
  if (p.capped) text += `; ${CAPPED_NOTE}`;
  if (p.note) text += `; ${p.note}`;
  return why ? `${text}; not priced: ${why}` : text;
}

/** The relaxed-flush lines, only `channelId`'s when given (the episode page, about one channel). */
function durabilityPart(entries: readonly DurabilityNow[], channelId: number | undefined): DurabilityPart {
  const shown = channelId === undefined ? entries : entries.filter((d) => d.channel_id === channelId);
  const durability = shown.map((d) => ({ channelId: d.channel_id, label: d.instance, text: durabilityNowText(d.prediction) }));
  return { durability, durabilityCaveat: durability.length ? DURABILITY_CAVEAT : null };
}

/**
 * `channels`: the cluster's channels now, for the drain lines; `channelId`: only that channel's
 * line (the episode page, about one channel), none when it is missing from `channels`; the
 * relaxed-flush lines likewise only that channel's.
 */
export function buildParallelismView(
  answer: Parallelism,
  { nowMs, channels = [], channelId }: { nowMs: number; channels?: readonly ChannelStatus[]; channelId?: number },
): ParallelismView {
  const caveat = caveatText(answer.cores);
  const durability = durabilityPart(answer.durability ?? [], channelId);
  if (answer.source === null) {
    // The server's words for why the newest run read nothing (e.g. a refused privilege): text.
    const text = answer.problem ? `No sample of the source's binlog: ${answer.problem}` : NO_SAMPLE_TEXT;
    return { kind: "none", text, caveat, ...durability };
  }
  const rows = SHOWN_WORKERS.map((workers) => ({
    workers,
    conservative: formatSpeedup(speedupAt(answer.conservative, workers)),
    optimistic: formatSpeedup(speedupAt(answer.optimistic, workers)),
  }));
  const conservative = speedupAt(answer.conservative, HEADLINE_WORKERS);
  const optimistic = speedupAt(answer.optimistic, HEADLINE_WORKERS);
  const headline =
    conservative === null || optimistic === null
      ? null
      : `The source's writes allow ~${formatSpeedup(conservative)} apply capacity with ${HEADLINE_WORKERS} workers (conservative); ` +
        `up to ~${formatSpeedup(optimistic)} optimistic.`;
  const size = formatCount(answer.mean_group_size);
  const sampledMs = answer.sampled_at ? Date.parse(answer.sampled_at) : null;
  const drained = channelId === undefined ? channels : channels.filter((c) => c.id === channelId);
  const drains = drained.flatMap((c) => {
    const text = drainText(c, conservative, answer.cores);
    return text === null ? [] : [{ channelId: c.id, label: channelLabel(c.instance, c.name), text }];
  });
  return {
    kind: "sampled",
    rows,
    headline,
    groupSize: `${size} ${size === "1" ? "transaction" : "transactions"} per group commit`,
    sample: `${formatCount(answer.transactions)} ${answer.transactions === 1 ? "transaction" : "transactions"} sampled ${formatAgo(sampledMs, nowMs)}`,
    caveat,
    drains,
    ...durability,
  };
}
