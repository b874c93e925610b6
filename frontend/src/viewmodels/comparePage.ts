// The whole compare page as one model: which replicas to compare when the URL does not say
// (comparePicks: the first one, and the one furthest from it, another region if any), what to
// ask the API for (the /compare request, one lag series per side), and, from the answers
// (ComparePageData), everything the page renders (comparePageModel). The page renders; this derives.
import type { Schemas } from "../api/client";
import { channelColors, channelLabel } from "./colors";
import { buildCompareModel, type CompareModel, type CompareOut } from "./compare";
import { channelsSpan, type CompareQuery, type CompareRequest, type Span } from "./compareQuery";
import type { SeriesOut } from "./series";

type ChannelStatus = Schemas["ChannelStatusOut"];
type ClusterStatus = Schemas["ClusterStatusOut"];

/** Each side's lag line: this many points. */
export const COMPARE_POINTS = 300;

/** One side's lag series to ask for: one channel over one span. */
export interface CompareSeriesAsk {
  channelId: number;
  span: Span;
}

export interface ComparePicks {
  /** Replica a (or the replica): the URL's, else the first channel. */
  first: ChannelStatus | undefined;
  /** Replica b (two replicas only): the URL's, else another region's, else any other. */
  other: ChannelStatus | undefined;
  /** null while there is nothing to compare (no channel yet, or only one for two replicas). */
  request: CompareRequest | null;
  /** a then b. */
  series: CompareSeriesAsk[];
}

function regionOf(status: ClusterStatus | undefined, instanceId: number): string {
  return status?.instances.find((i) => i.id === instanceId)?.region ?? "";
}

/** The replicas and windows to compare; a named range ("last hour") ends at `nowMs`. */
export function comparePicks(status: ClusterStatus | undefined, query: CompareQuery, nowMs: number): ComparePicks {
  const channels = status?.channels ?? [];
  const first = channels.find((c) => c.id === query.channelId) ?? channels[0];
  const other =
    query.mode === "channels" && first
      ? (channels.find((c) => c.id === query.otherId && c.id !== first.id) ??
        channels.find((c) => c.id !== first.id && regionOf(status, c.instance_id) !== regionOf(status, first.instance_id)) ??
        channels.find((c) => c.id !== first.id))
      : undefined;
  const request: CompareRequest | null = !first
    ? null
    : query.mode === "windows"
      ? { mode: "windows", channelId: first.id, a: query.a, b: query.b }
      : other
        ? { mode: "channels", channelId: first.id, otherId: other.id, span: channelsSpan(query, nowMs) }
        : null;
  const series: CompareSeriesAsk[] = !request
    ? []
    : request.mode === "windows"
      ? [
          { channelId: request.channelId, span: request.a },
          { channelId: request.channelId, span: request.b },
        ]
      : [
          { channelId: request.channelId, span: request.span },
          { channelId: request.otherId, span: request.span },
        ];
  return { first, other, request, series };
}

/** "Two replicas, one window": the last hour of the current pair. */
export function channelsModeQuery(picks: ComparePicks): CompareQuery {
  return { mode: "channels", channelId: picks.first?.id ?? null, otherId: picks.other?.id ?? null, range: "1h", span: null };
}

/** "One replica, two windows": the hour before the last, against the last hour. */
export function windowsModeQuery(picks: ComparePicks, nowMs: number): CompareQuery {
  return {
    mode: "windows",
    channelId: picks.first?.id ?? null,
    a: { startMs: nowMs - 2 * 3_600_000, endMs: nowMs - 3_600_000 },
    b: { startMs: nowMs - 3_600_000, endMs: nowMs },
  };
}

export interface ComparePageData {
  clusterId: number;
  query: CompareQuery;
  status: ClusterStatus | undefined;
  picks: ComparePicks;
  compare: CompareOut | undefined;
  /** Each side's lag line, once read. */
  series: { a?: SeriesOut | undefined; b?: SeriesOut | undefined };
}

export interface CompareOption {
  id: number;
  name: string;
}

export interface ComparePageView {
  clusterName: string;
  picks: ComparePicks;
  /** Replica a's choices: every channel, named with its region. */
  options: CompareOption[];
  /** Replica b's choices: every other channel. */
  otherOptions: CompareOption[];
  /** The status is read and the cluster has no replica channel. */
  noChannels: boolean;
  /** Two replicas asked for, but there is only one. */
  onlyOne: boolean;
  model: CompareModel | null;
}

export function comparePageModel(data: ComparePageData): ComparePageView {
  const { status, picks, query } = data;
  const channels = status?.channels ?? [];
  const colors = channelColors(channels);
  const name = (c: ChannelStatus) => {
    const region = regionOf(status, c.instance_id);
    return `${channelLabel(c.instance, c.name)}${region ? ` (${region})` : ""}`;
  };
  const options = channels.map((c) => ({ id: c.id, name: name(c) }));
  const pollMs = (status?.poll_interval_s ?? 1) * 1000;
  return {
    clusterName: status?.name ?? `cluster ${data.clusterId}`,
    picks,
    options,
    otherOptions: options.filter((o) => o.id !== picks.first?.id),
    noChannels: status !== undefined && channels.length === 0,
    onlyOne: picks.first !== undefined && query.mode === "channels" && picks.other === undefined,
    model: data.compare ? buildCompareModel(data.compare, data.series, colors, pollMs) : null,
  };
}
