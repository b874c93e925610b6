// "Parallel apply (predicted)", in the explorer's side panel and on the episode page: how much of
// the source's write stream a replica could apply at once, from the newest window of the source's
// binlog (the API simulates 1…16 workers under the commit-parent rule), in words and a small table.
import type { Schemas } from "../api/client";
import { formatAgo, formatCount, formatDuration } from "../format/format";
import { channelLabel } from "./colors";

type Parallelism = Schemas["ParallelismOut"];
type Speedup = Schemas["SpeedupOut"];
type ChannelStatus = Schemas["ChannelStatusOut"];

/** The table's rows: doubling workers is how an operator tries them (1 is the serial baseline). */
export const SHOWN_WORKERS = [1, 2, 4, 8, 16] as const;
/** The headline's worker count: a common first step from serial apply. */
export const HEADLINE_WORKERS = 4;
export const NO_SAMPLE_TEXT = "No sample of the source's binlog yet (every 5 min; MariaDB sources)";

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

export type ParallelismView =
  | { kind: "none"; text: string; caveat: string }
  | {
      kind: "sampled";
      rows: ParallelismRow[];
      /** null when the answer lacks the headline's worker count. */
      headline: string | null;
      groupSize: string;
      sample: string;
      caveat: string;
      drains: DrainLine[];
    };

/** `2.6×`, `1.0×` (one decimal: the simulation is no finer than that); missing: `—`. */
export function formatSpeedup(speedup: number | null | undefined): string {
  if (speedup === null || speedup === undefined || !Number.isFinite(speedup)) return "—";
  return `${speedup.toFixed(1)}×`;
}

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

/**
 * `channels`: the cluster's channels now, for the drain lines; `channelId`: only that channel's
 * line (the episode page, about one channel), none when it is missing from `channels`.
 */
export function buildParallelismView(
  answer: Parallelism,
  { nowMs, channels = [], channelId }: { nowMs: number; channels?: readonly ChannelStatus[]; channelId?: number },
): ParallelismView {
  const caveat = caveatText(answer.cores);
  if (answer.source === null) return { kind: "none", text: NO_SAMPLE_TEXT, caveat };
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
  };
}
