// The overview at fleet size (a hundred clusters): one card per cluster from the fleet status,
// its state (firing, stopped, unreachable, behind, caught up), problems first, and the filters
// kept in the URL. Pure: API answers in, what to draw out.
import type { Schemas } from "../api/client";
import { buildClusterCard, PROBLEM_KINDS, problemWords, type ClusterCard } from "./overview";
import type { GapPoint } from "./series";

type FleetStatus = Schemas["FleetStatusOut"];
type FleetCluster = Schemas["FleetClusterOut"];
type Sparklines = Schemas["SparklinesOut"];
type Firing = Schemas["FiringOut"];

/** A cluster's states, worst first: the first one orders the cards. */
export const FLEET_STATES = ["firing", "stopped", "unreachable", "behind", "ok", "no_samples", "disabled"] as const;
export type FleetState = (typeof FLEET_STATES)[number];
const PROBLEMS: readonly FleetState[] = ["firing", "stopped", "unreachable", "behind"];

export const STATE_WORDS: Record<FleetState, string> = {
  firing: "alert firing",
  stopped: "replication stopped or broken",
  unreachable: "server unreachable or stale",
  behind: "replica behind",
  ok: "all caught up",
  no_samples: "no samples yet",
  disabled: "disabled",
};

export interface FleetCard extends ClusterCard {
  /** The worst state: what orders the card. */
  state: FleetState;
  /** Every state that holds (a cluster may have an alert firing and a replica behind). */
  states: FleetState[];
  /** Alerts firing on the cluster now. */
  firing: number;
  /** The largest lag of its replica channels (null: none known). */
  worstLagS: number | null;
  /** The lag band that orders cards within a state (see lagBand). */
  lagBand: number;
  regions: string[];
  /** The current causes of its channels (code and words), each once. */
  causes: { cause: string; words: string }[];
  /** Lower-cased cluster and server names, for the search. */
  names: string[];
  servers: number;
}

/**
 * Lag in bands that double: under 1 s, 1–2 s, 2–4 s, … A lag that wobbles between refreshes
 * (40 s, then 42 s) keeps its band, so cards sorted by it do not swap places on every refresh;
 * within a band the name decides. Unknown lag: -1 (after every known one).
 */
export function lagBand(lagS: number | null): number {
  if (lagS === null || !Number.isFinite(lagS)) return -1;
  return lagS < 1 ? 0 : 1 + Math.floor(Math.log2(lagS));
}

/** The states of a cluster from its status and the alerts firing on it. */
export function clusterStates(cluster: FleetCluster, firing: number): FleetState[] {
  if (!cluster.enabled) return ["disabled"];
  const states = new Set<FleetState>();
  if (firing > 0) states.add("firing");
  for (const c of cluster.channels) {
    if (c.verdict === "stopped" || c.verdict === "broken") states.add("stopped");
    if (c.verdict === "unreachable" || (c.stale && c.sample_at !== null)) states.add("unreachable");
    if (c.verdict === "receive_bound" || c.verdict === "apply_bound") states.add("behind");
  }
  for (const i of cluster.instances) {
    if (i.enabled && (i.reachable === false || (i.stale && i.reachable !== null))) states.add("unreachable");
  }
  if (states.size === 0) {
    states.add(cluster.channels.some((c) => c.sample_at !== null) ? "ok" : "no_samples");
  }
  return FLEET_STATES.filter((s) => states.has(s));
}

/** Sparkline points per channel from the fleet's sparklines (a null bucket is a gap). */
export function fleetSparkPoints(sparks: Sparklines | undefined): Map<number, GapPoint[]> {
  const out = new Map<number, GapPoint[]>();
  for (const line of sparks?.lines ?? []) {
    out.set(
      line.channel_id,
      line.values.map((value, k) => ({ t: sparks!.origin + k * sparks!.bucket_ms, value, min: value, max: value })),
    );
  }
  return out;
}

/** Firing alerts per cluster (pending ones are not counted). */
export function firingByCluster(firing: readonly Firing[] | undefined): Map<number, number> {
  const out = new Map<number, number>();
  for (const f of firing ?? []) {
    if (f.phase === "firing") out.set(f.cluster_id, (out.get(f.cluster_id) ?? 0) + 1);
  }
  return out;
}

export function buildFleetCard(
  cluster: FleetCluster,
  generatedAt: string,
  spark: ReadonlyMap<number, GapPoint[]>,
  firing: number,
  nowMs: number,
): FleetCard {
  const status = { ...cluster, generated_at: generatedAt };
  const topology = {
    nodes: cluster.instances.map((i) => ({ ...i })),
    edges: cluster.edges,
  };
  const card = buildClusterCard(cluster, status, topology, spark, nowMs);
  const states = clusterStates(cluster, firing);
  const lags = cluster.channels.map((c) => c.lag_s).filter((v): v is number => v !== null);
  const worstLagS = lags.length ? Math.max(...lags) : null;
  const causes = new Map<string, string>();
  for (const c of cluster.channels) for (const k of c.causes) if (!causes.has(k.cause)) causes.set(k.cause, k.words);
  return {
    ...card,
    state: states[0] ?? "ok",
    states,
    firing,
    worstLagS,
    lagBand: lagBand(worstLagS),
    regions: [...new Set(cluster.instances.map((i) => i.region).filter(Boolean))].sort(),
    causes: [...causes].map(([cause, words]) => ({ cause, words })),
    names: [cluster.name, ...cluster.instances.map((i) => i.name)].map((n) => n.toLowerCase()),
    servers: cluster.instances.length,
  };
}

export function buildFleetCards(
  fleet: FleetStatus | undefined,
  sparks: Sparklines | undefined,
  firing: readonly Firing[] | undefined,
  nowMs: number,
): FleetCard[] {
  const spark = fleetSparkPoints(sparks);
  const alerts = firingByCluster(firing);
  return (fleet?.clusters ?? []).map((c) =>
    buildFleetCard(c, fleet?.generated_at ?? "", spark, alerts.get(c.id) ?? 0, nowMs),
  );
}

/**
 * Problems first: by the worst state (firing, stopped, unreachable, behind, caught up, no
 * samples, disabled), then by the worst lag's band (largest first), then by name and id. Every
 * key but the band is stable between refreshes, and the band moves only when a lag doubles or
 * halves: a refresh does not reorder the cards.
 */
export function sortFleet(cards: readonly FleetCard[]): FleetCard[] {
  const rank = (c: FleetCard) => FLEET_STATES.indexOf(c.state);
  return [...cards].sort(
    (a, b) => rank(a) - rank(b) || b.lagBand - a.lagBand || a.name.localeCompare(b.name) || a.id - b.id,
  );
}

export function isProblem(state: FleetState): boolean {
  return PROBLEMS.includes(state);
}

// --- filters (kept in the URL: ?q=&region=&state=&cause=) -------------------------------------

export interface FleetFilter {
  /** Part of a cluster's or a server's name (any case). */
  q: string;
  region: string;
  /** A FleetState, "problem" (any problem), or "" (any). */
  state: string;
  /** A cause code (e.g. "blocked_by_session"), or "" (any). */
  cause: string;
}

const FILTER_KEYS = ["q", "region", "state", "cause"] as const;

export function parseFleetFilter(params: URLSearchParams): FleetFilter {
  const get = (k: string) => (params.get(k) ?? "").slice(0, 200);
  return { q: get("q"), region: get("region"), state: get("state"), cause: get("cause") };
}

/** The URL's query with the filter in it (other parameters kept; empty filters left out). */
export function fleetSearch(current: URLSearchParams, filter: FleetFilter): URLSearchParams {
  const next = new URLSearchParams(current);
  for (const key of FILTER_KEYS) {
    const value = key === "q" ? filter.q.trimStart() : filter[key];
    if (value) next.set(key, value);
    else next.delete(key);
  }
  return next;
}

export function isFiltered(filter: FleetFilter): boolean {
  return FILTER_KEYS.some((k) => filter[k].trim() !== "");
}

export function matchesFilter(card: FleetCard, filter: FleetFilter): boolean {
  const q = filter.q.trim().toLowerCase();
  if (q && !card.names.some((n) => n.includes(q))) return false;
  if (filter.region && !card.regions.includes(filter.region)) return false;
  if (filter.state === "problem" && !card.states.some(isProblem)) return false;
  if (filter.state && filter.state !== "problem" && !card.states.includes(filter.state as FleetState)) return false;
  if (filter.cause && !card.causes.some((c) => c.cause === filter.cause)) return false;
  return true;
}

export function filterFleet(cards: readonly FleetCard[], filter: FleetFilter): FleetCard[] {
  return cards.filter((c) => matchesFilter(c, filter));
}

export interface FilterOption {
  value: string;
  label: string;
  count: number;
}

export interface FleetOptions {
  regions: FilterOption[];
  states: FilterOption[];
  causes: FilterOption[];
}

/**
 * What each filter offers, counted over the whole fleet (not the filtered part, so counts do
 * not shift as filters change). A value in the URL that no cluster has now stays offered, with
 * a count of 0, so the select still shows what is filtered on.
 */
export function fleetOptions(cards: readonly FleetCard[], filter: FleetFilter): FleetOptions {
  const count = (values: Iterable<string>, into: Map<string, number>) => {
    for (const v of new Set(values)) into.set(v, (into.get(v) ?? 0) + 1);
  };
  const regions = new Map<string, number>();
  const states = new Map<string, number>();
  const causes = new Map<string, number>();
  const words = new Map<string, string>();
  for (const card of cards) {
    count(card.regions, regions);
    count([...card.states, ...(card.states.some(isProblem) ? ["problem"] : [])], states);
    count(
      card.causes.map((c) => c.cause),
      causes,
    );
    for (const c of card.causes) words.set(c.cause, c.words);
  }
  const keep = (m: Map<string, number>, v: string) => {
    if (v && !m.has(v)) m.set(v, 0);
  };
  keep(regions, filter.region);
  keep(states, filter.state);
  keep(causes, filter.cause);
  const stateOrder = ["problem", ...FLEET_STATES] as string[];
  return {
    regions: [...regions]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([value, n]) => ({ value, label: value, count: n })),
    states: [...states]
      .sort(([a], [b]) => stateOrder.indexOf(a) - stateOrder.indexOf(b))
      .map(([value, n]) => ({
        value,
        label: value === "problem" ? "any problem" : (STATE_WORDS[value as FleetState] ?? value),
        count: n,
      })),
    causes: [...causes]
      .sort(([a], [b]) => (words.get(a) ?? a).localeCompare(words.get(b) ?? b))
      .map(([value, n]) => ({ value, label: words.get(value) ?? value.replaceAll("_", " "), count: n })),
  };
}

const CALM_WORDS: Partial<Record<FleetState, string>> = {
  ok: "all caught up",
  no_samples: "with no samples yet",
  disabled: "disabled",
};

/**
 * The overview's summary line, in parts: the cards' own problems by kind, summed (so "2 replica
 * channels behind" sits above a card saying "2 problems in 2 replica channels"), the alerts
 * firing, then the clusters with neither ("3 clusters all caught up").
 */
export function fleetSummary(cards: readonly FleetCard[]): string[] {
  const kinds = cards.flatMap((c) => c.problemKinds);
  const parts = PROBLEM_KINDS.map((kind) => [kind, kinds.filter((k) => k === kind).length] as const)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => problemWords(kind, count));
  const firing = cards.reduce((sum, c) => sum + c.firing, 0);
  if (firing > 0) parts.push(`${firing} alert${firing === 1 ? "" : "s"} firing`);
  const calm = cards.filter((c) => c.problems === 0 && c.firing === 0);
  for (const state of FLEET_STATES) {
    const count = calm.filter((c) => c.state === state).length;
    const words = CALM_WORDS[state] ?? STATE_WORDS[state];
    if (count > 0) parts.push(`${count} cluster${count === 1 ? "" : "s"} ${words}`);
  }
  return parts;
}
