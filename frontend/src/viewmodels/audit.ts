// The audit trail as the Settings → Audit table shows it: one row per change, its fields as
// "field: before → after" lines. Pure, so the wording is tested without a browser.
import type { Schemas } from "../api/client";

export type AuditEvent = Schemas["AuditEventOut"];

export interface AuditRow {
  id: number;
  at: string;
  who: string;
  from: string;
  via: string;
  what: string;
  changes: string[];
}

const KIND_WORDS: Record<string, string> = {
  cluster: "cluster",
  instance: "instance",
  alert_rule: "alert rule",
  silence: "silence",
  webhook_target: "webhook target",
  user: "user",
  api_token: "API token",
  check_token: "check token",
  check_token_cluster: "check token's cluster",
  annotation: "annotation",
};

// A secret's column is named for how it is kept; the reader wants what it is.
const SECRET_WORDS: Record<string, string> = {
  password_enc: "password",
  heartbeat_password_enc: "heartbeat password",
  password_hash: "password",
  token_hash: "token",
  secret_enc: "signing secret",
};

export function kindWords(kind: string): string {
  return KIND_WORDS[kind] ?? kind.replaceAll("_", " ");
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value === "" ? '""' : value;
  return JSON.stringify(value);
}

/** One line per changed field; secrets say only what happened to them. */
export function changeLines(changes: Record<string, unknown>): string[] {
  return Object.entries(changes)
    .map(([field, change]) => {
      if (typeof change === "string") return `${SECRET_WORDS[field] ?? field} ${change}`;
      if (Array.isArray(change) && change.length === 2) {
        const [before, after] = change as [unknown, unknown];
        if (before === null || before === undefined) return `${field}: ${shown(after)}`;
        if (after === null || after === undefined) return `${field}: was ${shown(before)}`;
        return `${field}: ${shown(before)} → ${shown(after)}`;
      }
      return `${field}: ${shown(change)}`;
    })
    .sort();
}

export function auditRows(events: readonly AuditEvent[], formatTime: (iso: string) => string): AuditRow[] {
  return events.map((e) => {
    const name = e.object_name || (e.object_id !== null ? `#${e.object_id}` : "");
    return {
      id: e.id,
      at: formatTime(e.at),
      who: e.actor,
      from: e.source,
      via: e.via,
      what: `${e.action} ${kindWords(e.kind)}${name ? ` ${name}` : ""}`,
      changes: changeLines(e.changes),
    };
  });
}

export const AUDIT_KINDS = Object.keys(KIND_WORDS);
export const AUDIT_ACTIONS = ["create", "update", "delete"] as const;
