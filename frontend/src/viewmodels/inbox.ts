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
  /** The payload's "why" sentences, strongest first (empty when it has none). */
  why: string[];
  headers: [string, string][];
  signature: string;
  json: string;
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

function whyOf(payload: Record<string, unknown> | null): string[] {
  const why = payload?.why;
  if (!Array.isArray(why)) return [];
  return why.flatMap((item) => {
    const cause = record(item);
    const sentence = text(cause?.sentence) ?? text(cause?.words);
    return sentence ? [sentence] : [];
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
