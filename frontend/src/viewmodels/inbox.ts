// The demo's webhook inbox: each received alert as a headline (what fired, where, why) read from
// the payload when it has those fields, the headers a receiver checks, and the whole payload as
// pretty-printed JSON text. Everything here is text: payloads carry server text.
import type { Schemas } from "../api/client";

export type InboxEntry = Schemas["InboxEntryOut"];

export interface InboxItem {
  id: number;
  receivedMs: number;
  lastReceivedMs: number;
  times: number;
  /** "firing", "resolved", … ("alert" when the payload does not say). */
  status: string;
  rule: string | null;
  summary: string | null;
  /** The payload's "why", strongest first (empty when it has none). */
  why: InboxWhy[];
  /** The lag episode the alert belongs to: its main cause first (null when the payload has none). */
  episode: InboxEpisode | null;
  /** The channel's state now, in words ("behind, cause not identified", "caught up"). */
  state: string | null;
  headers: [string, string][];
  signature: string;
  json: string;
}

/** One cause as the payload carries it: its words, what is happening, what to do. */
export interface InboxWhy {
  words: string | null;
  sentence: string | null;
  action: string | null;
}

/** The episode as the payload carries it, with the in-app path to its page. */
export interface InboxEpisode {
  /** The main cause in words (null while none is named). */
  words: string | null;
  sentence: string | null;
  action: string | null;
  /** "/clusters/1/episodes/17": the same page as the payload's link, inside this dashboard. */
  href: string | null;
}

const HEADER_ORDER = ["Idempotency-Key", "X-Lagscope-Signature", "X-Lagscope-Timestamp", "X-Lagscope-Delivery", "Content-Type", "User-Agent"];

const SIGNATURE_WORDS: Record<InboxEntry["signature"], string> = {
  valid: "signature valid (checked with the target's secret, as a receiver would)",
  invalid: "signature does not match the target's secret",
  unsigned: "unsigned",
};

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

// The words lead, as on the overview ("blocked by a session on the replica"), then the sentence
// and the action: a newcomer reading the inbox sees what the receiver gets, in full.
function whyOf(payload: Record<string, unknown> | null): InboxWhy[] {
  const why = payload?.why;
  if (!Array.isArray(why)) return [];
  return why.flatMap((item) => {
    const cause = record(item);
    const shown = { words: text(cause?.words), sentence: text(cause?.sentence), action: text(cause?.action) };
    return shown.words || shown.sentence ? [shown] : [];
  });
}

function id(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}

// The link is made here from ids, not taken from the payload's URL: a payload is data, and the
// demo's external address may not be the one this browser reaches the dashboard at.
function episodeOf(payload: Record<string, unknown> | null): InboxEpisode | null {
  const episode = record(payload?.episode);
  if (!episode) return null;
  const main = record(episode.main_cause);
  const cause = text(main?.cause);
  const cluster = id(record(payload?.scope)?.cluster_id);
  const episodeId = id(episode.id);
  return {
    words: cause ? text(main?.words) : null,
    sentence: text(main?.sentence),
    action: text(main?.action),
    href: cluster && episodeId ? `/clusters/${cluster}/episodes/${episodeId}` : null,
  };
}

export function inboxItem(entry: InboxEntry): InboxItem {
  const payload = record(entry.payload);
  const rule = record(payload?.rule);
  const known = HEADER_ORDER.filter((name) => name in entry.headers).map((name): [string, string] => [name, entry.headers[name] ?? ""]);
  const others = Object.entries(entry.headers).filter(([name]) => !HEADER_ORDER.includes(name));
  return {
    id: entry.id,
    receivedMs: Date.parse(entry.received_at),
    lastReceivedMs: Date.parse(entry.last_received_at),
    times: entry.times_received,
    status: text(payload?.status) ?? "alert",
    rule: text(rule?.name),
    summary: text(payload?.summary),
    why: whyOf(payload),
    episode: episodeOf(payload),
    state: text(payload?.state),
    headers: [...known, ...others],
    signature: SIGNATURE_WORDS[entry.signature] ?? entry.signature,
    json: JSON.stringify(entry.payload, null, 2) ?? "null",
  };
}

export function inboxItems(entries: readonly InboxEntry[]): InboxItem[] {
  return entries.map(inboxItem);
}
