// The alert rule form's values and what it sends: read from a stored rule (or the defaults of
// a new one), checked, and turned into the API's body. An edit sends every field (PATCH), as
// the form shows every field; the parts the form does not show (params.window_s, enabled)
// keep their stored values.
import type { Schemas } from "../api/client";
import type { AlertMetric } from "../api/metrics";
import { labelsText, parseLabels } from "./alerts";
import { EVERYWHERE, scopeBody, scopeValues, type ScopeValues } from "./scope";

type Rule = Schemas["RuleOut"];
type RuleBody = Schemas["RuleIn"];
export type Severity = RuleBody["severity"];
export type NullPolicy = NonNullable<RuleBody["null_policy"]>;

export const SEVERITIES: readonly Severity[] = ["info", "warning", "critical"];

/** What the form offers when the value is unknown (a stopped thread, an unreachable server). */
export const NULL_POLICIES: readonly { value: NullPolicy; label: string }[] = [
  { value: "firing_if_broken", label: "breach if SQL thread stopped or unreachable" },
  { value: "firing", label: "breach" },
  { value: "keep", label: "keep the last judgement" },
  { value: "ok", label: "fine" },
];

/** A per-replica override row: an instance's names it; a channel's names the channel (its
 * instance follows). Numbers as typed ("" = the rule's own). */
export interface OverrideRow {
  kind: "instance" | "channel";
  instanceId: string;
  channelId: string;
  threshold: string;
  forS: string;
  /** Its own resolve bound: set through the API, not shown, sent back as it was (the PATCH
   * replaces the whole list, and an edit must not drop it). */
  resolve: string;
  enabled: boolean;
}

export interface RuleFormValues {
  name: string;
  metric: AlertMetric;
  severity: Severity;
  threshold: string;
  forS: string;
  /** "" = none (resolve as soon as the value is at or below the threshold). */
  resolve: string;
  keepFiring: string;
  /** "" = notify once. */
  repeat: string;
  scope: ScopeValues;
  targetIds: number[];
  /** "team=db, tier=1". */
  labels: string;
  nullPolicy: NullPolicy;
  /** param_changed only: "sync_binlog, innodb_flush_log_at_trx_commit" ("" = any). */
  paramNames: string;
  overrides: OverrideRow[];
}

function text(value: number | null | undefined): string {
  return value === null || value === undefined ? "" : String(value);
}

function optionalNumber(value: string): number | null {
  return value.trim() === "" ? null : Number(value);
}

export function ruleFormValues(rule?: Rule): RuleFormValues {
  return {
    name: rule?.name ?? "",
    metric: (rule?.metric as AlertMetric | undefined) ?? "lag",
    severity: (rule?.severity as Severity | undefined) ?? "warning",
    threshold: rule ? String(rule.threshold) : "30",
    forS: rule ? String(rule.for_s) : "60",
    resolve: text(rule?.resolve_threshold),
    keepFiring: rule ? String(rule.keep_firing_s) : "0",
    repeat: text(rule?.repeat_s),
    scope: rule ? scopeValues(rule) : EVERYWHERE,
    targetIds: rule?.target_ids ?? [],
    labels: labelsText(rule?.labels ?? {}),
    nullPolicy: (rule?.null_policy as NullPolicy | undefined) ?? "firing_if_broken",
    paramNames: (rule?.params.names ?? []).join(", "),
    overrides: (rule?.overrides ?? []).map((o) => ({
      kind: o.channel_id !== null && o.channel_id !== undefined ? "channel" : "instance",
      instanceId: text(o.instance_id),
      channelId: text(o.channel_id),
      threshold: text(o.threshold),
      forS: text(o.for_s),
      resolve: text(o.resolve_threshold),
      enabled: o.enabled ?? true,
    })),
  };
}

export function newOverride(kind: OverrideRow["kind"]): OverrideRow {
  return { kind, instanceId: "", channelId: "", threshold: "", forS: "", resolve: "", enabled: true };
}

export function withOverride(values: RuleFormValues, index: number, change: Partial<OverrideRow>): RuleFormValues {
  return { ...values, overrides: values.overrides.map((o, i) => (i === index ? { ...o, ...change } : o)) };
}

export function withoutOverride(values: RuleFormValues, index: number): RuleFormValues {
  return { ...values, overrides: values.overrides.filter((_, i) => i !== index) };
}

export function withTarget(values: RuleFormValues, targetId: number, on: boolean): RuleFormValues {
  const others = values.targetIds.filter((id) => id !== targetId);
  return { ...values, targetIds: on ? [...others, targetId] : others };
}

/** The overrides that name something (a row left at "choose…" is not sent). */
function overridesBody(rows: readonly OverrideRow[]): RuleBody["overrides"] {
  return rows
    .filter((o) => (o.kind === "channel" ? o.channelId : o.instanceId))
    .map((o) => ({
      instance_id: o.kind === "instance" ? Number(o.instanceId) : null,
      channel_id: o.kind === "channel" ? Number(o.channelId) : null,
      threshold: optionalNumber(o.threshold),
      for_s: optionalNumber(o.forS),
      resolve_threshold: optionalNumber(o.resolve),
      enabled: o.enabled,
    }));
}

/** The body of a new rule (POST), or of a preview. `stored`: the rule being edited. */
export function ruleBody(values: RuleFormValues, stored?: Rule): RuleBody {
  return {
    name: values.name,
    metric: values.metric,
    threshold: Number(values.threshold),
    for_s: Number(values.forS),
    resolve_threshold: optionalNumber(values.resolve),
    keep_firing_s: Number(values.keepFiring || "0"),
    repeat_s: optionalNumber(values.repeat),
    ...scopeBody(values.scope),
    target_ids: values.targetIds,
    severity: values.severity,
    labels: parseLabels(values.labels),
    null_policy: values.nullPolicy,
    params: {
      names: values.paramNames
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean),
      window_s: stored?.params.window_s ?? 600,
    },
    overrides: overridesBody(values.overrides),
    enabled: stored?.enabled ?? true,
  };
}

/** The body of an edit (PATCH, and its preview): every field the form shows. */
export function rulePatch(stored: Rule, values: RuleFormValues): Schemas["RulePatch"] {
  return ruleBody(values, stored);
}

const LABEL_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const PARAM_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const WEEK_S = 604_800;

function isNumber(value: string): boolean {
  return value.trim() !== "" && Number.isFinite(Number(value));
}

/** What the API would refuse, in words, before sending (empty: nothing). The browser checks
 * the required and min fields itself; these are the rest, and the same again for a preview. */
export function ruleProblems(values: RuleFormValues): string[] {
  const problems: string[] = [];
  if (values.name.trim() === "") problems.push("The rule needs a name.");
  if (!isNumber(values.threshold)) problems.push("The threshold must be a number.");
  const forS = Number(values.forS);
  if (!isNumber(values.forS) || forS < 0 || forS > WEEK_S) problems.push("For (s) must be between 0 and 604800.");
  if (values.resolve.trim() !== "" && !isNumber(values.resolve)) problems.push("Resolve at or below must be a number.");
  const keep = Number(values.keepFiring || "0");
  if (!Number.isFinite(keep) || keep < 0 || keep > WEEK_S) problems.push("Keep firing (s) must be between 0 and 604800.");
  const repeat = Number(values.repeat);
  if (values.repeat.trim() !== "" && (!Number.isFinite(repeat) || repeat < 60 || repeat > WEEK_S)) {
    problems.push("Repeat every (s) must be between 60 and 604800, or empty.");
  }
  const keys = Object.keys(parseLabels(values.labels));
  const badKey = keys.find((k) => !LABEL_KEY.test(k));
  if (badKey !== undefined) problems.push(`Label "${badKey}": a name is letters, digits and _, not starting with a digit.`);
  if (keys.length > 20) problems.push("At most 20 labels.");
  if (values.metric === "param_changed") {
    const badName = values.paramNames
      .split(",")
      .map((n) => n.trim())
      .find((n) => n !== "" && !PARAM_NAME.test(n));
    if (badName !== undefined) problems.push(`"${badName}" is not a server parameter name.`);
  }
  values.overrides.forEach((o, i) => {
    if (o.threshold.trim() !== "" && !isNumber(o.threshold)) problems.push(`Override ${i + 1}: its bound must be a number.`);
    if (o.forS.trim() !== "" && (!isNumber(o.forS) || Number(o.forS) < 0)) {
      problems.push(`Override ${i + 1}: its wait must be 0 s or more.`);
    }
  });
  return problems;
}
