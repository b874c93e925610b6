// Alert pages' view models: events, firing alerts, deliveries and rules as rows to show.
import type { Schemas } from "../api/client";
import { scopeBody, type ScopeValues } from "./scope";

type Event = Schemas["EventOut"];
type Firing = Schemas["FiringOut"];
type Delivery = Schemas["DeliveryOut"];
type Rule = Schemas["RuleOut"];
type Target = Schemas["WebhookOut"];

const HOUR_MS = 3_600_000;

/** The explorer around an alert: an hour before it started to its end (or an hour after). */
export function explorerLink(clusterId: number, startsAt: string, endsAt: string | null): string {
  const start = Date.parse(startsAt);
  const end = endsAt ? Math.max(Date.parse(endsAt), start + 60_000) : start + HOUR_MS;
  const params = new URLSearchParams({
    from: new Date(start - HOUR_MS).toISOString(),
    to: new Date(end).toISOString(),
  });
  return `/clusters/${clusterId}?${params.toString()}`;
}

export interface EventRow {
  id: number;
  kind: string;
  at: string;
  summary: string;
  muted: string | null;
  link: string;
}

export function eventRow(event: Event): EventRow {
  const ends = event.kind === "resolved" ? event.at : null;
  return {
    id: event.id,
    kind: event.kind,
    at: event.at,
    summary: event.summary,
    muted: event.suppressed_by,
    link: explorerLink(event.cluster_id, event.starts_at, ends),
  };
}

/** Firing first, then pending; the oldest first within each. */
export function sortFiring(rows: readonly Firing[]): Firing[] {
  const rank = (f: Firing) => (f.phase === "firing" ? 0 : 1);
  return [...rows].sort(
    (a, b) => rank(a) - rank(b) || (Date.parse(a.since ?? "") || 0) - (Date.parse(b.since ?? "") || 0),
  );
}

/** What each target kind sends, as the form and the list name it. */
export const WEBHOOK_KINDS: readonly { value: Schemas["WebhookIn"]["kind"]; label: string }[] = [
  { value: "generic", label: "generic JSON" },
  { value: "alertmanager", label: "Alertmanager webhook body (v4)" },
  { value: "alertmanager_api", label: "Alertmanager API (POST /api/v2/alerts)" },
  { value: "slack", label: "Slack" },
];

export function webhookKindLabel(kind: string): string {
  return WEBHOOK_KINDS.find((k) => k.value === kind)?.label ?? kind;
}

/** "https://hooks.slack.com/… · #1a2b3c4d": the URL is never read back, only this. */
export function webhookUrlText(target: Pick<Target, "url_redacted" | "url_fingerprint">): string {
  return `${target.url_redacted} · #${target.url_fingerprint}`;
}

export interface DeliveryRow {
  id: number;
  target: string;
  kind: string;
  status: string;
  attempts: string;
  lastError: string | null;
}

/** One line per attempt: "#1 500 (12 ms)", "#2 ConnectError … (—)". */
export function attemptText(a: Schemas["AttemptOut"]): string {
  const what = a.status_code !== null ? String(a.status_code) : (a.error ?? "no answer");
  const ms = a.latency_s !== null ? `${Math.round(a.latency_s * 1000)} ms` : "—";
  return `#${a.number} ${what} (${ms})`;
}

export function deliveryRow(delivery: Delivery, targets: readonly Target[]): DeliveryRow {
  const target = targets.find((t) => t.id === delivery.target_id);
  return {
    id: delivery.id,
    target: target ? target.name : `#${delivery.target_id}`,
    kind: delivery.kind,
    status: delivery.status,
    attempts: delivery.log.map(attemptText).join(", "),
    lastError: delivery.last_error,
  };
}

/** "lag > 30 for 60 s, resolves ≤ 10" */
export function ruleCondition(rule: Pick<Rule, "metric" | "threshold" | "for_s" | "resolve_threshold">): string {
  const parts = [`${rule.metric} > ${rule.threshold}`];
  if (rule.for_s > 0) parts.push(`for ${rule.for_s} s`);
  if (rule.resolve_threshold !== null) parts.push(`resolves ≤ ${rule.resolve_threshold}`);
  return parts.join(", ");
}

/** A rule's labels as the form edits them: "team=db, tier=1" ⇄ {team: "db", tier: "1"}. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of text.split(",")) {
    const [key = "", ...rest] = part.split("=");
    if (key.trim()) labels[key.trim()] = rest.join("=").trim();
  }
  return labels;
}

export function labelsText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
}

/** A new silence from now for `hours`, over the scope picked (ScopePicker). */
export function silenceBody(scope: ScopeValues, hours: string, reason: string, nowMs: number): Schemas["SilenceIn"] {
  return { ...scopeBody(scope), ends_at: new Date(nowMs + Number(hours) * HOUR_MS).toISOString(), reason };
}
