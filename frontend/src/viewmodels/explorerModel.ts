// The whole explorer page as one model: what the series to ask for are (explorerSeries), and,
// from what the API answered (ExplorerData) and where the page stands (ExplorerFrame), every
// chart's, lane's and panel's view model (buildExplorerModel). The page renders; this derives.
import type { Schemas } from "../api/client";
import type { MetricName } from "../api/metrics";
import { mergeSamples, type LiveSample } from "../live/samples";
import { buildAlertBands, type AlertBandsModel } from "./alertBands";
import { buildAnnotationMarks, canWrite, type AnnotationMark } from "./annotations";
import { buildWhyStrips, type WhyStripsModel } from "./causes";
import { channelColors } from "./colors";
import type { CausesOut } from "./episodeTypes";
import { buildDecompositionModel, buildRateModel, type DecompositionPanel, type RateModel } from "./decomposition";
import { annotationScopes, buildExplorerChannels, scopeNames, type ExplorerChannel } from "./explorer";
import { explorerWindow, isLive, type ExplorerState } from "./explorerState";
import {
  buildInstancePanels,
  durabilityWarnings,
  heartbeatWarnings,
  INSTANCE_METRICS,
  instanceColors,
  type DurabilityWarning,
  type InstancePanel,
} from "./instancePanels";
import { buildLagChartModel, metricsFor, type LagChartModel } from "./lagChart";
import { buildParamLanes, type ParamLanesModel } from "./paramLanes";
import { buildChannelPanels, type ChannelPanel } from "./sidePanel";
import { resolveWindow, type TimeWindow } from "./timeWindow";

type SeriesResponse = Schemas["SeriesResponse"];
type Series = Partial<Record<MetricName, SeriesResponse>>;

/** The backlog and rate strips under the lag, and the server panels: fewer points than the lag. */
export const STRIP_POINTS = 300;
export const STRIP_METRICS: MetricName[] = ["not_received", "received_not_applied", "source_rate", "apply_rate"];
export const INSTANCE_POINTS = 200;

/** Several metrics of the same servers over the same window: one `/series` request. */
export interface SeriesAsk {
  metrics: readonly MetricName[];
  instanceIds: readonly number[];
  window: TimeWindow;
  points: number;
}

/** The strips the live stream feeds too (the rates it does not). */
export const STREAMED_STRIPS: MetricName[] = ["not_received", "received_not_applied"];

/**
 * The series the page asks for, one request per group: the lag of the replicas, their strips,
 * the panels of every server. A refresh is three series requests, not one per metric (~13).
 * While the stream feeds the lag and the backlog (`streamed`), the backlog strips leave the
 * strips' request for one of their own, re-fetched as rarely as the lag; the rates keep
 * polling (`strips[1]`, empty otherwise).
 */
export function explorerSeries(
  cluster: Pick<Schemas["ClusterOut"], "instances"> | undefined,
  state: Pick<ExplorerState, "source" | "points">,
  window: TimeWindow,
  streamed = false,
): { lag: SeriesAsk; strips: [SeriesAsk, SeriesAsk]; instances: SeriesAsk } {
  const all = cluster?.instances ?? [];
  const replicas = all.filter((i) => i.role === "replica").map((i) => i.id);
  const servers = all.map((i) => i.id);
  const strip = (metrics: MetricName[]): SeriesAsk => ({ metrics, instanceIds: replicas, window, points: STRIP_POINTS });
  const polled = STRIP_METRICS.filter((m) => !STREAMED_STRIPS.includes(m));
  return {
    lag: { metrics: metricsFor(state.source), instanceIds: replicas, window, points: state.points },
    strips: streamed ? [strip(polled), strip(STREAMED_STRIPS)] : [strip(STRIP_METRICS), strip([])],
    instances: { metrics: INSTANCE_METRICS, instanceIds: servers, window, points: INSTANCE_POINTS },
  };
}

/** What the API answered for the explorer (undefined: not known yet). */
export interface ExplorerData {
  cluster: Schemas["ClusterOut"];
  status: Schemas["ClusterStatusOut"] | undefined;
  /** When the status was fetched (0: never). */
  statusAtMs: number;
  me: Schemas["MeOut"] | undefined;
  /** Series by metric: the lag source's, the strips', the server panels'. */
  lag: Series;
  strips: Series;
  instances: Series;
  verdicts: Schemas["VerdictsOut"] | undefined;
  /** The cause segments over the window (the why strips); undefined: not known yet. */
  causes?: CausesOut | undefined;
  changes: readonly Schemas["ParamChangeOut"][];
  annotations: readonly Schemas["AnnotationOut"][];
  alertEvents: readonly Schemas["EventOut"][];
  /** How many alert events were asked for (a full page may not reach the window's start). */
  alertEventsLimit: number;
  firing: readonly Schemas["FiringOut"][] | undefined;
  rules: readonly Schemas["RuleOut"][];
  /** The live stream's samples, oldest first. */
  samples: readonly LiveSample[];
}

/** Where the page stands: its URL state, the clock, and whether the stream feeds the lag. */
export interface ExplorerFrame {
  state: ExplorerState;
  nowMs: number;
  streamed: boolean;
}

export interface ExplorerModel {
  live: boolean;
  startMs: number;
  endMs: number;
  lag: LagChartModel;
  lanes: ParamLanesModel;
  why: WhyStripsModel;
  alertBands: AlertBandsModel;
  marks: AnnotationMark[];
  decomposition: DecompositionPanel[];
  rates: RateModel;
  instancePanels: InstancePanel[];
  warnings: DurabilityWarning[];
  panels: ChannelPanel[];
  channels: ExplorerChannel[];
  annotationScopes: { value: string; label: string }[];
  source: Schemas["InstanceOut"] | undefined;
  writable: boolean;
}

/** The window's span, for the refresh pace and the annotation snap. */
export function spanMs(state: ExplorerState): number {
  const window = explorerWindow(state);
  return window.kind === "last" ? window.spanMs : window.endMs - window.startMs;
}

export function buildExplorerModel(data: ExplorerData, frame: ExplorerFrame): ExplorerModel {
  const { state, nowMs, streamed } = frame;
  const live = isLive(state);
  const { cluster, status } = data;
  const channels = status?.channels ?? [];
  const colors = channelColors(channels);
  const hidden = state.hidden;
  const pollIntervalS = cluster.poll_interval_s;
  const replicas = cluster.instances.filter((i) => i.role === "replica").map((i) => i.id);

  // The range drawn: the lag's own answer, but a streamed window's end advances with the clock
  // and the newest sample, not with the fetch.
  const first = data.lag[metricsFor(state.source)[0] as MetricName];
  const fallback = resolveWindow(explorerWindow(state), Math.max(nowMs, (data.samples.at(-1)?.ts ?? 0) + 1));
  const startMs = streamed ? fallback.startMs : (first?.start ?? fallback.startMs);
  const endMs = streamed ? fallback.endMs : (first?.end ?? fallback.endMs);

  const lagSeries = { ...data.lag };
  if (live) lagSeries.lag_s = mergeSamples(lagSeries.lag_s, data.samples, "lag_s", startMs, endMs);
  const strip = { ...data.strips };
  if (streamed) {
    strip.not_received = mergeSamples(strip.not_received, data.samples, "not_received", startMs, endMs);
    strip.received_not_applied = mergeSamples(strip.received_not_applied, data.samples, "received_not_applied", startMs, endMs);
  }

  const names = scopeNames(cluster, channels);
  const instances = status?.instances ?? [];
  return {
    live,
    startMs,
    endMs,
    lag: buildLagChartModel({
      series: lagSeries,
      channels,
      colors,
      source: state.source,
      hidden,
      log: state.log,
      verdicts: data.verdicts,
      pollIntervalS,
      startMs,
      endMs,
    }),
    lanes: buildParamLanes(data.changes, replicas, startMs, endMs),
    why: buildWhyStrips({ causes: data.causes?.channels, channels, colors, hidden, startMs, endMs, nowMs }),
    alertBands: buildAlertBands({
      events: data.alertEvents,
      firing: data.firing,
      rules: data.rules,
      names,
      hidden,
      channels,
      limit: data.alertEventsLimit,
      startMs,
      endMs,
      nowMs,
    }),
    marks: buildAnnotationMarks(data.annotations, startMs, endMs, data.me, names),
    decomposition: buildDecompositionModel({
      notReceived: strip.not_received,
      receivedNotApplied: strip.received_not_applied,
      verdicts: data.verdicts,
      channels,
      colors,
      hidden,
      pollIntervalS,
      startMs,
      endMs,
    }),
    rates: buildRateModel({
      sourceRate: strip.source_rate,
      applyRate: strip.apply_rate,
      channels,
      colors,
      hidden,
      pollIntervalS,
      endMs,
    }),
    instancePanels: buildInstancePanels({
      series: data.instances,
      instances,
      colors: instanceColors(instances, channels, colors),
      pollIntervalS,
      endMs,
    }),
    warnings: [...durabilityWarnings(instances), ...heartbeatWarnings(instances)],
    panels: buildChannelPanels(channels, colors, data.statusAtMs || nowMs),
    channels: buildExplorerChannels(cluster, channels, colors),
    annotationScopes: annotationScopes(cluster, channels),
    source: cluster.instances.find((i) => i.role === "source"),
    writable: canWrite(data.me),
  };
}
