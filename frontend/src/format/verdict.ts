// Verdicts and lag sources in words, with an icon and a tone: colour is never the only signal.
import type { Schemas } from "../api/client";

export type Verdict = Schemas["ChannelStatusOut"]["verdict"];
export type LagSource = NonNullable<Schemas["ChannelStatusOut"]["lag_source"]>;
export type Tone = "ok" | "warn" | "bad" | "muted";

export interface VerdictInfo {
  label: string;
  icon: string;
  tone: Tone;
  /** Sort key: problems first. */
  rank: number;
  explain: string;
}

const VERDICTS: Record<NonNullable<Verdict>, VerdictInfo> = {
  broken: { label: "broken", icon: "✕", tone: "bad", rank: 0, explain: "a replication thread stopped on an error" },
  unreachable: { label: "unreachable", icon: "⚠", tone: "bad", rank: 1, explain: "the replica did not answer the last poll" },
  stopped: { label: "stopped", icon: "■", tone: "bad", rank: 2, explain: "a replication thread was stopped" },
  receive_bound: { label: "receive-bound", icon: "⇣", tone: "warn", rank: 3, explain: "behind on receiving: the network or the source's dump thread" },
  apply_bound: { label: "apply-bound", icon: "⚙", tone: "warn", rank: 4, explain: "received but not applied yet: the SQL/applier threads are the bottleneck" },
  delayed_by_design: { label: "delayed by design", icon: "⏲", tone: "muted", rank: 5, explain: "a configured SQL_Delay" },
  caught_up: { label: "caught up", icon: "✓", tone: "ok", rank: 6, explain: "nothing waiting to be received or applied" },
};

const UNKNOWN: VerdictInfo = { label: "no data", icon: "?", tone: "muted", rank: 1.5, explain: "no sample yet" };

export function verdictInfo(verdict: Verdict | undefined): VerdictInfo {
  return verdict ? VERDICTS[verdict] : UNKNOWN;
}

export const VERDICT_NAMES = Object.keys(VERDICTS) as NonNullable<Verdict>[];

const SOURCES: Record<LagSource, string> = {
  heartbeat: "heartbeat",
  applier: "applier",
  source_timeline: "timeline",
  seconds_behind_source: "server (Seconds_Behind)",
};

export function lagSourceLabel(source: LagSource | null | undefined): string {
  return source ? SOURCES[source] : "no source";
}
