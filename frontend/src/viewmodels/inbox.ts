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
    headers: [...known, ...others],
    signature: SIGNATURE_WORDS[entry.signature] ?? entry.signature,
    json: JSON.stringify(entry.payload, null, 2) ?? "null",
  };
}

export function inboxItems(entries: readonly InboxEntry[]): InboxItem[] {
  return entries.map(inboxItem);
}
