// Firing alerts as bands on the explorer's lag chart (docs/alerts.md): one band per incident, from the
// moment it fired to the moment it resolved (or now, while it fires), clipped to the chart's
// window. An incident is told apart by rule, instance, channel and its start: every event of one
// incident (firing, repeat, resolved) carries the same starts_at.
import type { Schemas } from "../api/client";
import { formatClock } from "../format/format";
import { ACCENT, BAD, WARN } from "../theme/palette";

type EventOut = Schemas["EventOut"];
type FiringOut = Schemas["FiringOut"];
type RuleOut = Schemas["RuleOut"];

export interface AlertBand {
  key: string;
  ruleId: number;
  ruleName: string;
  severity: string;
  /** What fired: the instance, or the channel ("replica1 · ch"). */
  subject: string;
  firedMs: number;
  /** Null while it still fires; its last event's time when it ended unrecorded. */
  resolvedMs: number | null;
  /** The band as drawn: clipped to the chart's window. */
  drawFromMs: number;
  drawToMs: number;
  color: string;
  /** Severity and rule in words (never the colour alone): the legend's and the hover's text. */
  label: string;
}

export interface AlertBandsModel {
  bands: AlertBand[];
  /** Said when the events read may not reach back to the window's start. */
  note: string | null;
}

export interface AlertBandsInput {
  /** Alert events of this cluster, newest first, as /alerts/events returns them. */
  events: readonly EventOut[];
  /** Alerts pending or firing now: an incident older than the events read still shows. Undefined
   * while not known: every incident without a resolve is then taken as still firing. */
  firing: readonly FiringOut[] | undefined;
  rules: readonly Pick<RuleOut, "id" | "name" | "severity">[];
  /** Names by scope key: `i<instance id>`, `c<channel id>` (scopeNames). */
  names: ReadonlyMap<string, string>;
  /** Channels unticked in the explorer, and which instance each channel is on: a hidden replica's
   * alerts are left out with its line (an instance's, when all its channels are hidden). */
  hidden?: readonly number[];
  channels?: readonly { id: number; instance_id: number }[];
  /** How many events were asked for: a full page may not reach back to startMs. */
  limit: number;
  startMs: number;
  endMs: number;
  nowMs: number;
}

export const SEVERITY_COLORS: Record<string, string> = {
  critical: BAD,
  warning: WARN,
  info: ACCENT,
};
const SEVERITY_ORDER = ["critical", "warning", "info"];

function incidentKey(ruleId: number, instanceId: number, channelId: number | null, startsMs: number): string {
  return `${ruleId}:${instanceId}:${channelId ?? "-"}:${startsMs}`;
}

export function buildAlertBands(input: AlertBandsInput): AlertBandsModel {
  const rules = new Map(input.rules.map((r) => [r.id, r]));
  type Incident = {
    ruleId: number;
    instanceId: number;
    channelId: number | null;
    firedMs: number;
    resolvedMs: number | null;
    lastSeenMs: number;
    ended: "resolved" | "open" | "unrecorded";
    name?: string;
    severity?: string;
  };
  const incidents = new Map<string, Incident>();
  for (const e of input.events) {
    const firedMs = Date.parse(e.starts_at);
    const atMs = Date.parse(e.at);
    const key = incidentKey(e.rule_id, e.instance_id, e.channel_id, firedMs);
    const incident = incidents.get(key) ?? {
      ruleId: e.rule_id,
      instanceId: e.instance_id,
      channelId: e.channel_id,
      firedMs,
      resolvedMs: null,
      lastSeenMs: atMs,
      ended: "open",
    };
    incident.lastSeenMs = Math.max(incident.lastSeenMs, atMs);
    if (e.kind === "resolved") {
      incident.resolvedMs = Math.max(incident.resolvedMs ?? 0, atMs);
      incident.ended = "resolved";
    }
    incidents.set(key, incident);
  }
  const firingNow = (input.firing ?? []).filter((f) => f.phase === "firing");
  const sameSubject = (i: Incident, f: FiringOut) =>
    i.ruleId === f.rule_id && i.instanceId === f.instance_id && i.channelId === f.channel_id;
  // No resolved event and not firing now: it ended unrecorded (a resolve is recorded only after a
  // notified firing, so a silenced incident has none). It fired at least until its last event.
  for (const i of incidents.values()) {
    if (input.firing && i.ended === "open" && !firingNow.some((f) => sameSubject(i, f))) {
      i.ended = "unrecorded";
      i.resolvedMs = i.lastSeenMs;
    }
  }
  for (const f of firingNow) {
    if (!f.since || [...incidents.values()].some((i) => i.ended === "open" && sameSubject(i, f))) continue;
    const firedMs = Date.parse(f.since);
    incidents.set(incidentKey(f.rule_id, f.instance_id, f.channel_id, firedMs), {
      ruleId: f.rule_id,
      instanceId: f.instance_id,
      channelId: f.channel_id,
      firedMs,
      resolvedMs: null,
      lastSeenMs: firedMs,
      ended: "open",
      name: f.rule_name,
      severity: f.severity,
    });
  }

  const hidden = new Set(input.hidden ?? []);
  const channels = input.channels ?? [];
  const isHidden = (i: Incident) => {
    if (i.channelId !== null) return hidden.has(i.channelId);
    const own = channels.filter((c) => c.instance_id === i.instanceId);
    return own.length > 0 && own.every((c) => hidden.has(c.id));
  };

  const bands: AlertBand[] = [];
  for (const [key, i] of incidents) {
    if (isHidden(i)) continue;
    const toMs = i.resolvedMs ?? input.nowMs;
    if (Number.isNaN(i.firedMs) || toMs <= input.startMs || i.firedMs >= input.endMs) continue;
    const rule = rules.get(i.ruleId);
    const ruleName = rule?.name ?? i.name ?? `rule ${i.ruleId}`;
    const severity = rule?.severity ?? i.severity ?? "warning";
    const subject =
      (i.channelId !== null ? input.names.get(`c${i.channelId}`) : undefined) ??
      input.names.get(`i${i.instanceId}`) ??
      `instance ${i.instanceId}`;
    const when =
      i.resolvedMs === null
        ? `firing since ${formatClock(i.firedMs)}`
        : i.ended === "unrecorded"
          ? `fired ${formatClock(i.firedMs)}, last seen firing ${formatClock(i.resolvedMs)}`
          : `fired ${formatClock(i.firedMs)}–${formatClock(i.resolvedMs)}`;
    bands.push({
      key,
      ruleId: i.ruleId,
      ruleName,
      severity,
      subject,
      firedMs: i.firedMs,
      resolvedMs: i.resolvedMs,
      drawFromMs: Math.max(i.firedMs, input.startMs),
      drawToMs: Math.min(toMs, input.endMs),
      color: SEVERITY_COLORS[severity] ?? WARN,
      label: `${severity}: ${ruleName} on ${subject}, ${when}`,
    });
  }
  bands.sort(
    (a, b) =>
      a.firedMs - b.firedMs ||
      SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity) ||
      a.key.localeCompare(b.key),
  );

  const oldest = input.events.at(-1);
  const short = input.events.length >= input.limit && oldest !== undefined && Date.parse(oldest.at) > input.startMs;
  return {
    bands,
    note: short ? `alert bands: only the latest ${input.limit} alert events were read, back to ${formatClock(Date.parse(oldest.at))}` : null,
  };
}

/** The alerts firing at instant t, for the chart's hover. */
export function alertsAt(model: AlertBandsModel, t: number): AlertBand[] {
  return model.bands.filter((b) => b.drawFromMs <= t && t <= b.drawToMs);
}
