// The overview: one card per cluster, problems first. Pure: API answers in, what to draw out.
import type { Schemas } from "../api/client";
import { formatAgo, formatDuration } from "../format/format";
import { lagSourceLabel, verdictInfo, type VerdictInfo } from "../format/verdict";
import { currentCauseView, type CurrentCauseView } from "./causes";
import { channelColors, channelLabel } from "./colors";
import { withGaps, type GapPoint } from "./series";
import { MUTED } from "../theme/palette";

type ClusterOut = Schemas["ClusterOut"];
type StatusOut = Schemas["ClusterStatusOut"];
type ChannelStatus = Schemas["ChannelStatusOut"];
type InstanceStatus = Schemas["InstanceStatusOut"];
type TopologyOut = Schemas["TopologyOut"];
type SeriesResponse = Schemas["SeriesResponse"];

export interface ChannelRow {
  channelId: number;
  label: string;
  color: string;
  lagText: string;
  lagSourceText: string;
  verdict: VerdictInfo;
  stale: boolean;
  /** "server says 0 s, heartbeat says 42 s" when the lag sources disagree. */
  disagreement: string | null;
  /** Why it is behind now (the strongest current cause), in words; null when none is named. */
  cause: CurrentCauseView | null;
  /** The ongoing episode's page, when the channel is in one. */
  episodeHref: string | null;
  /** "3 errant transactions" (GTIDs the source never wrote), what to do on hover; null: none. */
  errant: ErrantView | null;
  /** What the row counts as among its card's problems (null: none). */
  problem: ProblemKind | null;
  spark: GapPoint[];
}

/**
 * One problem on a card: a replica channel's (its worst: stopped or broken, then unreachable or
 * stale, then behind, then errant transactions, then lag sources disagreeing) or a source that
 * does not answer. A card's problem count and the overview's summary line are both counted from
 * these, so they agree.
 */
export type ProblemKind = "stopped" | "unreachable" | "behind" | "errant" | "disagreement" | "source_unreachable";

export const PROBLEM_KINDS: readonly ProblemKind[] = ["stopped", "unreachable", "behind", "errant", "disagreement", "source_unreachable"];

/** The words for `count` problems of a kind: "2 replica channels behind". */
export function problemWords(kind: ProblemKind, count: number): string {
  const channels = `replica channel${count === 1 ? "" : "s"}`;
  switch (kind) {
    case "stopped":
      return `${count} ${channels} stopped or broken`;
    case "unreachable":
      return `${count} ${channels} unreachable or stale`;
    case "behind":
      return `${count} ${channels} behind`;
    case "errant":
      return `${count} ${channels} with errant transactions`;
    case "disagreement":
      return `${count} ${channels} whose lag sources disagree`;
    case "source_unreachable":
      return `${count} source${count === 1 ? "" : "s"} unreachable or stale`;
  }
}

function rowProblem(row: Pick<ChannelRow, "verdict" | "stale" | "errant" | "disagreement">, channel: ChannelStatus): ProblemKind | null {
  if (channel.verdict === "stopped" || channel.verdict === "broken") return "stopped";
  if (channel.verdict === "unreachable" || row.stale) return "unreachable";
  if (row.verdict.tone === "bad" || row.verdict.tone === "warn") return "behind";
  if (row.errant) return "errant";
  return row.disagreement ? "disagreement" : null;
}

export interface ErrantView {
  text: string;
  title: string;
}

/** A replica's errant transactions in a few words, the API's full sentence as the title. */
export function errantView(channel: ChannelStatus): ErrantView | null {
  const count = channel.errant_trx ?? 0;
  if (count <= 0) return null;
  return {
    text: `${count} errant transaction${count === 1 ? "" : "s"}`,
    title: channel.errant_problem ?? `GTIDs the source never wrote: ${channel.errant_gtids ?? "unknown"}`,
  };
}

export interface TopologyNode {
  id: number;
  name: string;
  role: "source" | "replica";
  region: string;
  /** Marked on the node: "unreachable", "stale (last polled 2 m ago)", "never polled". */
  problem: string | null;
  channels: ChannelRow[];
  children: TopologyNode[];
}

export interface ClusterCard {
  id: number;
  name: string;
  enabled: boolean;
  worst: VerdictInfo;
  problems: number;
  /** Each of its problems by kind (as many as `problems`). */
  problemKinds: ProblemKind[];
  roots: TopologyNode[];
  /** No replica channel has a sample yet. */
  noSamples: boolean;
  summary: string;
  /** When the status shown was read (changes with every live refresh). */
  generatedAt: string | null;
}

/** "server says 0 s, heartbeat says 42 s": the server's own figure against the best one. */
export function disagreementText(channel: ChannelStatus): string | null {
  if (!channel.disagreement) return null;
  const server = channel.seconds_behind_source;
  const others: [string, number | null][] = [
    ["heartbeat", channel.heartbeat_lag_s],
    ["applier", channel.applier_lag_s],
    ["timeline", channel.timeline_lag_s],
  ];
  const other = others.find(([, value]) => value !== null);
  if (other && server !== null) {
    return `server says ${formatDuration(server)}, ${other[0]} says ${formatDuration(other[1])}`;
  }
  if (other && server === null) {
    return `server says NULL, ${other[0]} says ${formatDuration(other[1])}`;
  }
  return "lag sources disagree";
}

function instanceProblem(instance: InstanceStatus | undefined, nowMs: number): string | null {
  if (!instance) return null;
  if (!instance.enabled) return "disabled";
  if (instance.reachable === null) return "never polled";
  if (instance.reachable === false) {
    return instance.last_error ? `unreachable: ${instance.last_error}` : "unreachable";
  }
  if (instance.stale) {
    const at = instance.last_polled_at ? Date.parse(instance.last_polled_at) : null;
    return `stale (last polled ${formatAgo(at, nowMs)})`;
  }
  return null;
}

function channelRow(
  channel: ChannelStatus,
  color: string,
  spark: ReadonlyMap<number, GapPoint[]>,
  clusterId: number,
): ChannelRow {
  const verdict = verdictInfo(channel.verdict);
  const row = {
    channelId: channel.id,
    label: channelLabel(channel.instance, channel.name),
    color,
    lagText: channel.lag_s === null ? "no lag value" : formatDuration(channel.lag_s),
    lagSourceText: channel.lag_s === null ? "" : lagSourceLabel(channel.lag_source),
    verdict: channel.stale ? { ...verdict, label: `${verdict.label} (stale)`, tone: "bad" as const } : verdict,
    stale: channel.stale,
    disagreement: disagreementText(channel),
    cause: currentCauseView(channel.causes),
    episodeHref: channel.episode_id != null ? `/clusters/${clusterId}/episodes/${channel.episode_id}` : null,
    errant: errantView(channel),
    spark: spark.get(channel.id) ?? [],
  };
  return { ...row, problem: rowProblem(row, channel) };
}

/** Sparkline points per channel from a 15-minute lag_s series answer. */
export function sparkPoints(
  series: SeriesResponse | undefined,
  pollIntervalS: number,
): Map<number, GapPoint[]> {
  const out = new Map<number, GapPoint[]>();
  for (const s of series?.series ?? []) {
    if (s.channel_id !== null) {
      out.set(s.channel_id, withGaps(s.points, s.bucket_ms, pollIntervalS * 1000, series?.end));
    }
  }
  return out;
}

/** What a card needs of a cluster (ClusterOut, or a fleet status entry). */
export type CardCluster = Pick<ClusterOut, "id" | "name" | "enabled" | "poll_interval_s"> & {
  instances: readonly Pick<ClusterOut["instances"][number], "id" | "name" | "role" | "region">[];
};

/** What a card needs of a topology: the nodes (optional) and which instance feeds which. */
export interface CardTopology {
  nodes?: TopologyOut["nodes"];
  edges: readonly Pick<TopologyOut["edges"][number], "source_id" | "replica_id">[];
}

export function buildClusterCard(
  cluster: CardCluster,
  status: StatusOut | undefined,
  topology: CardTopology | undefined,
  /** A 15-minute lag_s answer, or the sparkline points per channel already made. */
  series: SeriesResponse | ReadonlyMap<number, GapPoint[]> | undefined,
  nowMs: number,
): ClusterCard {
  const channels = status?.channels ?? [];
  const colors = channelColors(channels);
  const spark = series instanceof Map ? series : sparkPoints(series as SeriesResponse | undefined, cluster.poll_interval_s);
  const instances = new Map((status?.instances ?? []).map((i) => [i.id, i]));
  const rowsByInstance = new Map<number, ChannelRow[]>();
  for (const channel of channels) {
    const row = channelRow(channel, colors.get(channel.id) ?? MUTED, spark, cluster.id);
    rowsByInstance.set(channel.instance_id, [...(rowsByInstance.get(channel.instance_id) ?? []), row]);
  }

  const nodes = topology?.nodes ?? cluster.instances.map((i) => ({ ...i, reachable: null }));
  const childrenOf = new Map<number | null, number[]>();
  const hasParent = new Set<number>();
  for (const edge of topology?.edges ?? []) {
    if (edge.source_id !== null && edge.source_id !== edge.replica_id) {
      const list = childrenOf.get(edge.source_id) ?? [];
      if (!list.includes(edge.replica_id)) list.push(edge.replica_id);
      childrenOf.set(edge.source_id, list);
      hasParent.add(edge.replica_id);
    }
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const visited = new Set<number>();
  const build = (id: number): TopologyNode | null => {
    const node = byId.get(id);
    if (!node || visited.has(id)) return null;
    visited.add(id);
    return {
      id,
      name: node.name,
      role: node.role,
      region: node.region,
      problem: instanceProblem(instances.get(id), nowMs),
      channels: rowsByInstance.get(id) ?? [],
      children: (childrenOf.get(id) ?? [])
        .map(build)
        .filter((n): n is TopologyNode => n !== null)
        .sort(byProblem),
    };
  };
  // Sources first, then replicas whose source is not known; chained replicas sit under theirs.
  const rootIds = [...nodes]
    .sort((a, b) => (a.role === b.role ? a.id - b.id : a.role === "source" ? -1 : 1))
    .filter((n) => !hasParent.has(n.id))
    .map((n) => n.id);
  const roots = rootIds.map(build).filter((n): n is TopologyNode => n !== null);
  // A cycle (A replicates B replicates A) leaves nodes unvisited: show them at the top level.
  for (const n of nodes) if (!visited.has(n.id)) roots.push(build(n.id) as TopologyNode);

  const rows = [...rowsByInstance.values()].flat();
  const verdicts = rows.map((r) => r.verdict);
  const unreachable = [...instances.values()].filter((i) => i.reachable === false || i.stale);
  const worst = [...verdicts].sort((a, b) => a.rank - b.rank)[0] ?? verdictInfo(null);
  const problemKinds: ProblemKind[] = [
    ...rows.map((r) => r.problem).filter((p): p is ProblemKind => p !== null),
    ...unreachable.filter((i) => i.role === "source").map((): ProblemKind => "source_unreachable"),
  ];
  const problems = problemKinds.length;
  const noSamples = rows.length === 0 || channels.every((c) => c.sample_at === null);
  const summary = noSamples
    ? "no samples yet"
    : problems === 0
      ? `${rows.length} replica channel${rows.length === 1 ? "" : "s"}, all caught up`
      : `${problems} problem${problems === 1 ? "" : "s"} in ${rows.length} replica channel${rows.length === 1 ? "" : "s"}`;
  return {
    id: cluster.id,
    name: cluster.name,
    enabled: cluster.enabled,
    worst,
    problems,
    problemKinds,
    roots,
    noSamples,
    summary,
    generatedAt: status?.generated_at ?? null,
  };
}

function byProblem(a: TopologyNode, b: TopologyNode): number {
  const rank = (n: TopologyNode) =>
    Math.min(n.problem ? 1 : 99, ...n.channels.map((c) => c.verdict.rank));
  return rank(a) - rank(b) || a.name.localeCompare(b.name);
}

/** Problems first: the worst verdict, then the number of problems, then the name. */
export function sortCards(cards: readonly ClusterCard[]): ClusterCard[] {
  return [...cards].sort(
    (a, b) =>
      Number(b.enabled) - Number(a.enabled) ||
      a.worst.rank - b.worst.rank ||
      b.problems - a.problems ||
      a.name.localeCompare(b.name),
  );
}
