// A cause's evidence as tables an operator reads: the blocking session (id, user@host, how long,
// its statement), the applier's transaction (GTID or trx id, age, rows changed), the table (and
// whether it has a primary key), then whatever else the finding carried. The evidence is a flat
// key → value map (keys as analysis/causes writes them: blocker_*, candidate_*, trx_*, gtid,
// rows_modified, table, has_primary_key, …); they are grouped by prefix or name, and a key this
// file does not know still shows, under its own name, as text.
import { formatDuration, MISSING } from "../format/format";
import type { EvidenceValue } from "./episodeTypes";

/** One evidence value as text: durations for `_s` keys, yes/no for flags, the rest verbatim
 * (ids and counts exactly: a thread id shown as "4.71 k" could not be found on the server). */
export function evidenceValueText(key: string, value: EvidenceValue): string {
  // An empty server string (a session with no state) reads as missing, not as a blank.
  if (value === null || value === "") return MISSING;
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return String(value);
    if (key.endsWith("_per_s")) return `${trimNumber(value)}/s`;
    if (key.endsWith("_rate")) return `${trimNumber(value)} trx/s`;
    if (/(^|_)s$/.test(key) || key.endsWith("_seconds")) return formatDuration(value);
    if (key.endsWith("_pct") || key.endsWith("_percent")) return `${trimNumber(value)} %`;
    return Number.isInteger(value) ? String(value) : trimNumber(value);
  }
  return value;
}

function trimNumber(value: number): string {
  return String(Number(value.toPrecision(4)));
}

export type EvidenceGroupKind = "session" | "candidate" | "transaction" | "table" | "other";

export interface EvidenceRow {
  /** The evidence key(s) the row shows (stable, for tests and selectors). */
  key: string;
  label: string;
  text: string;
  /** Server text (a statement): shown monospaced and wrapped, still as text. */
  code: boolean;
}

export interface EvidenceGroup {
  kind: EvidenceGroupKind;
  title: string;
  rows: EvidenceRow[];
}

const TITLES: Record<EvidenceGroupKind, string> = {
  session: "The blocking session",
  candidate: "A likely blocking session (not named for certain)",
  transaction: "The transaction",
  table: "The table",
  other: "Other evidence",
};

const PREFIXES: [EvidenceGroupKind, readonly string[]][] = [
  ["session", ["blocker_", "blocking_", "session_"]],
  ["candidate", ["candidate_"]],
  ["transaction", ["trx_", "transaction_"]],
  ["table", ["table_"]],
];
const WHOLE_KEYS: Record<string, EvidenceGroupKind> = {
  gtid: "transaction",
  trx_id: "transaction",
  table: "table",
  schema: "table",
  has_primary_key: "table",
  has_usable_key: "table",
  rows_modified: "transaction",
  rows_per_s: "transaction",
  event: "table",
  blocked_s: "session",
  blocked_thread_id: "session",
  wait_s: "session",
  lock: "session",
  candidates: "candidate",
  // The channel's figures, not the applier's transaction (whose keys also start trx_).
  trx_behind: "other",
};

const SESSION_LABELS: Record<string, string> = {
  thread_id: "session id",
  id: "session id",
  time_s: "idle / busy for",
  idle_s: "idle for",
  command: "command",
  state: "state",
  statement: "statement",
  info: "statement",
  lock: "lock",
  certain: "named for certain",
  trx_started_at: "its transaction started",
  object: "object",
  object_name: "object",
  blocked_s: "applier blocked for",
  wait_s: "applier waiting for",
  blocked_thread_id: "applier thread id",
};

/** The words for a key's last part, per group; a part not listed is its own name, spaced. */
const LABELS: Record<EvidenceGroupKind, Record<string, string>> = {
  session: SESSION_LABELS,
  candidate: { ...SESSION_LABELS, candidates: "sessions that could hold it", sessions: "all of them" },
  transaction: {
    gtid: "GTID",
    id: "transaction id",
    trx_id: "transaction id",
    age_s: "age",
    started_at: "started",
    rows_modified: "rows changed",
    rows_locked: "rows locked",
    rows_per_s: "rows changed per second",
    state: "state",
    operation: "operation",
    lock_wait_s: "waiting for a lock for",
    lock_wait_started_at: "lock wait started",
  },
  table: {
    table: "table",
    name: "table",
    schema: "schema",
    has_primary_key: "has a primary key",
    has_usable_key: "has a usable key",
    primary_key: "has a primary key",
    rows: "rows (estimate)",
    event: "row event",
  },
  // The channel's figures in words (never received_not_applied in front of an operator); any
  // other key, e.g. a parameter name, is shown as the server spells it.
  other: {
    lag_s: "lag",
    trx_behind: "transactions behind",
    not_received: "transactions not yet received",
    received_not_applied: "received, not yet applied",
    io_state: "IO thread",
    sql_state: "SQL thread",
    apply_rate: "apply rate",
    source_rate: "source write rate",
    waiting_statement: "the applier's statement",
  },
};

const CODE_PARTS = new Set(["statement", "info", "query"]);

function groupOf(key: string): { kind: EvidenceGroupKind; part: string } {
  const whole = WHOLE_KEYS[key];
  if (whole) return { kind: whole, part: key };
  for (const [kind, prefixes] of PREFIXES) {
    const prefix = prefixes.find((p) => key.startsWith(p));
    if (prefix) return { kind, part: key.slice(prefix.length) };
  }
  return { kind: "other", part: key };
}

// A key outside the known groups is shown as sent: it may be a parameter name
// (sync_relay_log), which must read as the server spells it.
function labelOf(kind: EvidenceGroupKind, part: string): string {
  return LABELS[kind][part] ?? (kind === "other" ? part : part.replace(/_/g, " "));
}

/** The evidence of one cause as tables, in the order session, transaction, table, other; empty
 * groups left out. In the session table, user and host read as one "user@host" row, and the
 * table's schema and name as one "schema.table". */
export function evidenceGroups(evidence: Readonly<Record<string, EvidenceValue>>): EvidenceGroup[] {
  const parts = new Map<EvidenceGroupKind, Map<string, { key: string; value: EvidenceValue }>>();
  for (const [key, value] of Object.entries(evidence)) {
    const { kind, part } = groupOf(key);
    const group = parts.get(kind) ?? new Map();
    group.set(part, { key, value });
    parts.set(kind, group);
  }
  const order: EvidenceGroupKind[] = ["session", "candidate", "transaction", "table", "other"];
  return order
    .filter((kind) => parts.has(kind))
    .map((kind) => ({ kind, title: TITLES[kind], rows: rowsOf(kind, parts.get(kind) as Map<string, { key: string; value: EvidenceValue }>) }));
}

function rowsOf(kind: EvidenceGroupKind, group: Map<string, { key: string; value: EvidenceValue }>): EvidenceRow[] {
  const rows: EvidenceRow[] = [];
  const take = (part: string) => {
    const entry = group.get(part);
    group.delete(part);
    return entry;
  };
  if (kind === "session" || kind === "candidate") {
    const id = take("thread_id") ?? take("id");
    if (id) rows.push(row(kind, id.key, "thread_id", id.value));
    const user = take("user");
    const host = take("host");
    if (user || host) {
      const text = `${user?.value ?? MISSING}@${host?.value ?? MISSING}`;
      rows.push({ key: [user?.key, host?.key].filter(Boolean).join("+"), label: "user@host", text, code: false });
    }
  }
  if (kind === "table") {
    const schema = take("schema");
    const name = take("table") ?? take("name");
    if (name || schema) {
      const text = schema?.value != null && name?.value != null ? `${schema.value}.${name.value}` : String(name?.value ?? schema?.value ?? MISSING);
      rows.push({ key: [schema?.key, name?.key].filter(Boolean).join("+"), label: "table", text, code: false });
    }
  }
  for (const [part, { key, value }] of group) rows.push(row(kind, key, part, value));
  return rows;
}

function row(kind: EvidenceGroupKind, key: string, part: string, value: EvidenceValue): EvidenceRow {
  return { key, label: labelOf(kind, part), text: evidenceValueText(key, value), code: CODE_PARTS.has(part) };
}
