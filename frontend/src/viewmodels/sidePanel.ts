// The explorer's side panel: the latest status of each replica channel, as term → value rows.
import type { Schemas } from "../api/client";
import { formatAgo, formatBytes, formatCount, formatDuration, formatRate } from "../format/format";
import { lagSourceLabel, verdictInfo, type VerdictInfo } from "../format/verdict";
import { currentCauseView, type CurrentCauseView } from "./causes";
import { channelLabel } from "./colors";
import { disagreementText } from "./overview";
import { MUTED } from "../theme/palette";

type ChannelStatus = Schemas["ChannelStatusOut"];

export interface StatusRow {
  term: string;
  value: string;
  problem?: boolean;
}

export interface ChannelPanel {
  channelId: number;
  label: string;
  color: string;
  verdict: VerdictInfo;
  rows: StatusRow[];
  /** Errors as the server reported them (shown as text, never HTML). */
  errors: { thread: string; text: string }[];
  disagreement: string | null;
  /** Why it is behind now, in words (the sentence and action on hover); null when none is named. */
  cause: CurrentCauseView | null;
  /** Errant transactions: which, and what to do before any failover; null when none. */
  errant: string | null;
}

const IO_WORDS: Record<NonNullable<ChannelStatus["io_state"]>, string> = {
  yes: "running",
  connecting: "connecting",
  preparing: "preparing",
  no: "stopped",
};

/** A caught-up replica's backlog is the transactions in flight; the rates' noise between two
 * polls would otherwise read "not catching up (falling behind 48 trx/s)" at 200 ms of lag. */
export function etaText(eta: ChannelStatus["eta"], verdict?: ChannelStatus["verdict"]): string {
  if (verdict === "caught_up") return "caught up";
  if (!eta) return "unknown";
  if (eta.catching_up && !eta.never) {
    if (eta.seconds === 0) return "caught up";
    const band =
      eta.low_s !== null && eta.high_s !== null && eta.high_s > eta.low_s
        ? ` (${formatDuration(eta.low_s)}–${formatDuration(eta.high_s)})`
        : "";
    const basis = eta.basis === "transaction_progress" ? ", from the large transaction's progress" : "";
    return `${formatDuration(eta.seconds)} to catch up${band}${basis}`;
  }
  if (eta.never || eta.falling_behind_per_s !== null) {
    return eta.falling_behind_per_s !== null
      ? `not catching up (falling behind ${formatRate(eta.falling_behind_per_s, "trx")})`
      : "not catching up";
  }
  // Inside one large transaction the rates say nothing about the time left; "not catching up"
  // would be false (the analysis does not say never), so say what is known.
  if (eta.basis === "transaction_progress") return "unknown: applying one large transaction";
  return "unknown";
}

/** GTIDs executed on the replica that the source never wrote: how many, and which. */
function errantRow(c: ChannelStatus): StatusRow {
  const count = c.errant_trx ?? null;
  if (count === null || count <= 0) return { term: "errant trx", value: formatCount(count) };
  return { term: "errant trx", value: `${formatCount(count)}: ${c.errant_gtids ?? "GTIDs unknown"}`, problem: true };
}

export function buildChannelPanels(
  channels: readonly ChannelStatus[],
  colors: ReadonlyMap<number, string>,
  nowMs: number,
): ChannelPanel[] {
  return channels.map((c) => {
    const sampled = c.sample_at ? Date.parse(c.sample_at) : null;
    const rows: StatusRow[] = [
      { term: "lag", value: c.lag_s === null ? "no value" : `${formatDuration(c.lag_s)} (${lagSourceLabel(c.lag_source)})` },
      { term: "heartbeat", value: formatDuration(c.heartbeat_lag_s) },
      { term: "applier", value: formatDuration(c.applier_lag_s) },
      { term: "timeline", value: c.timeline_lag_s === null ? formatDuration(null) : `${formatDuration(c.timeline_lag_s)} ± ${formatDuration(c.timeline_resolution_s)}` },
      { term: "server says", value: c.seconds_behind_source === null ? "NULL" : formatDuration(c.seconds_behind_source) },
      { term: "IO thread", value: c.io_state ? IO_WORDS[c.io_state] : "unknown", problem: c.io_state === "no" || c.io_state === "connecting" },
      { term: "SQL thread", value: c.sql_running === null ? "unknown" : c.sql_running ? "running" : "stopped", problem: c.sql_running === false },
      { term: "trx behind", value: formatCount(c.trx_behind) },
      { term: "not received", value: formatCount(c.not_received) },
      { term: "received, not applied", value: formatCount(c.received_not_applied) },
      errantRow(c),
      { term: "apply / source", value: `${formatRate(c.apply_rate, "trx")} / ${formatRate(c.source_rate, "trx")}` },
      { term: "relay log", value: formatBytes(c.relay_log_space) },
      { term: "ETA", value: etaText(c.eta, c.verdict) },
      { term: "sampled", value: formatAgo(sampled, nowMs), problem: c.stale },
    ];
    const errors = [
      ...(c.last_io_error ? [{ thread: "IO", text: c.last_io_error }] : []),
      ...(c.last_sql_error ? [{ thread: "SQL", text: c.last_sql_error }] : []),
    ];
    return {
      channelId: c.id,
      label: channelLabel(c.instance, c.name),
      color: colors.get(c.id) ?? MUTED,
      verdict: verdictInfo(c.verdict),
      rows,
      errors,
      disagreement: disagreementText(c),
      cause: currentCauseView(c.causes),
      errant: (c.errant_trx ?? 0) > 0 ? (c.errant_problem ?? null) : null,
    };
  });
}
