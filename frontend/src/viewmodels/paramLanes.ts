// Parameter lanes under the lag chart, on its time axis: one lane per tracked parameter that
// changed in the range (per instance, or "all replicas" when every replica made the same change
// together), its value as labelled segments, and a marker on the chart at each change.
import type { Schemas } from "../api/client";
import { formatClock, formatDateTime, formatParamValue } from "../format/format";

type ParamChange = Schemas["ParamChangeOut"];

/** Changes this close on every replica are one step ("all replicas"). */
export const GROUP_WINDOW_MS = 120_000;

export interface LaneSegment {
  fromMs: number;
  toMs: number;
  /** Percent of the range, for positioning under the chart's plot area. */
  leftPct: number;
  widthPct: number;
  label: string;
  /** Alternating shade so neighbouring segments read apart. */
  shade: 0 | 1;
}

export interface ChangeMarker {
  id: string;
  /** When the new value was first seen (the marker). */
  t: number;
  /** The change happened in (windowFromMs, t]. */
  windowFromMs: number;
  leftPct: number;
  title: string;
  detail: string;
}

export interface ParamLane {
  key: string;
  scope: string;
  name: string;
  label: string;
  segments: LaneSegment[];
  markers: ChangeMarker[];
}

export interface ParamLanesModel {
  lanes: ParamLane[];
  markers: ChangeMarker[];
  startMs: number;
  endMs: number;
}

interface Step {
  old: string | null;
  next: string | null;
  fromMs: number;
  t: number;
  instances: string[];
  ids: number[];
}

function pct(t: number, startMs: number, endMs: number): number {
  const span = endMs - startMs;
  return span > 0 ? Math.min(100, Math.max(0, ((t - startMs) / span) * 100)) : 0;
}

function windowText(fromMs: number, toMs: number, spanMs: number): string {
  const fmt = spanMs > 86_400_000 ? formatDateTime : formatClock;
  return `changed between ${fmt(fromMs)} and ${fmt(toMs)}`;
}

function lane(scope: string, name: string, steps: Step[], startMs: number, endMs: number): ParamLane {
  const key = `${scope}:${name}`;
  const segments: LaneSegment[] = [];
  let from = startMs;
  let value = steps[0]?.old ?? null;
  const push = (to: number) => {
    if (to > from) {
      segments.push({
        fromMs: from,
        toMs: to,
        leftPct: pct(from, startMs, endMs),
        widthPct: pct(to, startMs, endMs) - pct(from, startMs, endMs),
        label: formatParamValue(value),
        shade: (segments.length % 2) as 0 | 1,
      });
    }
  };
  for (const step of steps) {
    const at = Math.min(Math.max(step.t, startMs), endMs);
    push(at);
    from = at;
    value = step.next;
  }
  push(endMs);
  const markers = steps.map((step) => ({
    id: `${key}:${step.ids.join("+")}`,
    t: step.t,
    windowFromMs: step.fromMs,
    leftPct: pct(step.t, startMs, endMs),
    title: `${scope}: ${name} ${formatParamValue(step.old)} → ${formatParamValue(step.next)}`,
    detail:
      windowText(step.fromMs, step.t, endMs - startMs) +
      (step.instances.length > 1 ? ` (${step.instances.join(", ")})` : ""),
  }));
  return { key, scope, name, label: `${scope} · ${name}`, segments, markers };
}

function stepOf(change: ParamChange): Step {
  return {
    old: change.old_value,
    next: change.new_value,
    fromMs: Date.parse(change.last_old_at),
    t: Date.parse(change.first_new_at),
    instances: [change.instance_name],
    ids: [change.id],
  };
}

/** The same steps on every replica, each within GROUP_WINDOW_MS: one merged list, else null. */
function together(perInstance: Map<number, Step[]>, replicaIds: readonly number[]): Step[] | null {
  if (replicaIds.length < 2 || perInstance.size !== replicaIds.length) return null;
  if (!replicaIds.every((id) => perInstance.has(id))) return null;
  const lists = replicaIds.map((id) => perInstance.get(id) as Step[]);
  const first = lists[0] as Step[];
  if (!lists.every((l) => l.length === first.length)) return null;
  const merged: Step[] = [];
  for (let i = 0; i < first.length; i += 1) {
    const steps = lists.map((l) => l[i] as Step);
    const same = steps.every((s) => s.old === steps[0]?.old && s.next === steps[0]?.next);
    const ts = steps.map((s) => s.t);
    if (!same || Math.max(...ts) - Math.min(...ts) > GROUP_WINDOW_MS) return null;
    merged.push({
      old: steps[0]?.old ?? null,
      next: steps[0]?.next ?? null,
      fromMs: Math.min(...steps.map((s) => s.fromMs)),
      t: Math.max(...ts),
      instances: steps.flatMap((s) => s.instances).sort(),
      ids: steps.flatMap((s) => s.ids),
    });
  }
  return merged;
}

export function buildParamLanes(
  changes: readonly ParamChange[],
  replicaIds: readonly number[],
  startMs: number,
  endMs: number,
): ParamLanesModel {
  const byName = new Map<string, Map<number, Step[]>>();
  const names = new Map<number, string>();
  const ordered = [...changes].sort((a, b) => Date.parse(a.first_new_at) - Date.parse(b.first_new_at));
  for (const change of ordered) {
    names.set(change.instance_id, change.instance_name);
    const perInstance = byName.get(change.name) ?? new Map<number, Step[]>();
    perInstance.set(change.instance_id, [...(perInstance.get(change.instance_id) ?? []), stepOf(change)]);
    byName.set(change.name, perInstance);
  }
  const lanes: ParamLane[] = [];
  for (const [name, perInstance] of byName) {
    const merged = together(perInstance, replicaIds);
    if (merged) {
      lanes.push(lane("all replicas", name, merged, startMs, endMs));
      continue;
    }
    for (const [instanceId, steps] of perInstance) {
      lanes.push(lane(names.get(instanceId) ?? `instance ${instanceId}`, name, steps, startMs, endMs));
    }
  }
  lanes.sort(
    (a, b) =>
      Number(b.scope === "all replicas") - Number(a.scope === "all replicas") ||
      a.scope.localeCompare(b.scope) ||
      a.name.localeCompare(b.name),
  );
  return { lanes, markers: lanes.flatMap((l) => l.markers).sort((a, b) => a.t - b.t), startMs, endMs };
}

/** Where the charts' hover cursor falls on the lanes, in percent; null when nothing is hovered
 * or the instant is off the range. */
export function cursorLeftPct(model: Pick<ParamLanesModel, "startMs" | "endMs">, t: number | null): number | null {
  if (t === null || !Number.isFinite(t) || t < model.startMs || t > model.endMs) return null;
  return pct(t, model.startMs, model.endMs);
}
