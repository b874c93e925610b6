// The cluster lag explorer: lag chart with parameter lanes and annotations, receive vs apply,
// rates, and the replicas' latest status. Its state is in the URL.
import { useMemo, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { useFiringAlerts } from "../hooks/useAlertEvents";
import { useAlertRules } from "../hooks/useAlertRules";
import { CLUSTER_ALERT_EVENTS_LIMIT, useClusterAlertEvents } from "../hooks/useClusterAlertEvents";
import { useAnnotations, useCreateAnnotation, useDeleteAnnotation, useUpdateAnnotation } from "../hooks/useAnnotations";
import { useCluster } from "../hooks/useCluster";
import { useLiveSamples } from "../hooks/useLiveSamples";
import { useClusterStatus } from "../hooks/useClusterStatus";
import { useMe } from "../hooks/useMe";
import { useNow } from "../hooks/useNow";
import { useParamChanges } from "../hooks/useParamChanges";
import { useSeenOnce } from "../hooks/useSeenOnce";
import { useSeriesList, type MetricName, type SeriesParams } from "../hooks/useSeries";
import { useVerdicts } from "../hooks/useVerdicts";
import { buildAlertBands } from "../viewmodels/alertBands";
import { annotationDraft, buildAnnotationMarks, canWrite } from "../viewmodels/annotations";
import { channelColors } from "../viewmodels/colors";
import { buildDecompositionModel, buildRateModel } from "../viewmodels/decomposition";
import {
  annotationScopes,
  buildExplorerChannels,
  liveIntervalMs,
  scopeIds,
  scopeNames,
  scopeOf,
  streamedRefetchMs,
} from "../viewmodels/explorer";
import {
  explorerSearch,
  explorerWindow,
  isLive,
  parseExplorerState,
  zoomedIn,
  zoomedOut,
  zoomReset,
  type ExplorerState,
} from "../viewmodels/explorerState";
import { buildInstancePanels, durabilityWarnings, heartbeatWarnings, INSTANCE_METRICS, instanceColors } from "../viewmodels/instancePanels";
import { buildLagChartModel, metricsFor } from "../viewmodels/lagChart";
import { isStreamed, mergeSamples } from "../live/samples";
import { buildParamLanes } from "../viewmodels/paramLanes";
import { buildChannelPanels } from "../viewmodels/sidePanel";
import { resolveWindow } from "../viewmodels/timeWindow";
import { zoomRange } from "../viewmodels/zoom";
import { AlertBandList } from "../components/AlertBands";
import { AnnotationForm } from "../components/AnnotationForm";
import { AnnotationList } from "../components/AnnotationList";
import { DecompositionChart, DecompositionLegend } from "../components/DecompositionChart";
import { ExplorerControls, RangePicker } from "../components/ExplorerToolbar";
import { DurabilityBanner, InstancePanels } from "../components/InstancePanels";
import { LagChart } from "../components/LagChart";
import { ParamLanes } from "../components/ParamLanes";
import { RateChart } from "../components/RateChart";
import { SidePanel } from "../components/SidePanel";
import { ClusterNav } from "../components/ClusterNav";
import { CompareWithLink } from "../components/CompareWithLink";
import { Empty, Loading, ProblemView } from "../components/States";

const STRIP_POINTS = 300;
const STRIP_METRICS: MetricName[] = ["not_received", "received_not_applied", "source_rate", "apply_rate"];
const INSTANCE_POINTS = 200;

type Draft = { startsMs: number; endsMs: number | null; editing: number | null };

export function ClusterPage() {
  const clusterId = Number(useParams().clusterId);
  const [params, setParams] = useSearchParams();
  const state = useMemo(() => parseExplorerState(params), [params]);
  const window = useMemo(() => explorerWindow(state), [state]);
  const live = isLive(state);
  const span = window.kind === "last" ? window.spanMs : window.endMs - window.startMs;
  const interval = liveIntervalMs(span);

  const me = useMe();
  const cluster = useCluster(clusterId);
  const status = useClusterStatus(clusterId, interval);
  const replicas = useMemo(
    () => (cluster.data?.instances ?? []).filter((i) => i.role === "replica").map((i) => i.id),
    [cluster.data],
  );
  const lagParams = useMemo<SeriesParams[]>(
    () => metricsFor(state.source).map((metric) => ({ metric, instanceIds: replicas, window, points: state.points })),
    [state.source, replicas, window, state.points],
  );
  const stripParams = useMemo<SeriesParams[]>(
    () => STRIP_METRICS.map((metric) => ({ metric, instanceIds: replicas, window, points: STRIP_POINTS })),
    [replicas, window],
  );
  const instanceIds = useMemo(() => (cluster.data?.instances ?? []).map((i) => i.id), [cluster.data]);
  const instanceParams = useMemo<SeriesParams[]>(
    () => INSTANCE_METRICS.map((metric) => ({ metric, instanceIds, window, points: INSTANCE_POINTS })),
    [instanceIds, window],
  );
  const [stripRef, stripSeen] = useSeenOnce<HTMLElement>();
  const [instanceRef, instanceSeen] = useSeenOnce<HTMLElement>();
  // Live: the stream follows the right edge of the "best" lag; the range is re-fetched rarely.
  const feed = useLiveSamples(clusterId, { enabled: live, keepMs: 2 * streamedRefetchMs(span) + 60_000 });
  const streamed = live && state.source === "best" && feed.status?.state === "connected";
  const lagSeries = useSeriesList(lagParams, { intervalMs: streamed ? streamedRefetchMs(span) : interval });
  // The charts below the lag wait for it: on a first load the panels are still in view (the
  // page is short), and their ~13 series requests queued the lag behind them in the browser's
  // six connections and the API's thread pool (bench/ui_render.py, first chart).
  const lagSettled = replicas.length === 0 || lagSeries.every((q) => !q.isPending);
  const instanceSeries = useSeriesList(instanceParams, {
    intervalMs: Math.max(interval, 10_000),
    enabled: instanceSeen && lagSettled,
  });
  // The backlog strips are in the stream too; the rates are not, and keep polling.
  const strips = useSeriesList(stripParams, {
    intervalMs: interval,
    enabled: stripSeen && lagSettled,
    intervalFor: (p) => (streamed && isStreamed(p.metric) ? streamedRefetchMs(span) : undefined),
  });
  const verdicts = useVerdicts(clusterId, window, STRIP_POINTS, interval);
  const changes = useParamChanges(clusterId, window, Math.max(interval, 5000));
  const annotations = useAnnotations(clusterId, window, Math.max(interval, 10_000));
  const alertEvents = useClusterAlertEvents(clusterId, Math.max(interval, 10_000));
  const firing = useFiringAlerts(clusterId);
  const rules = useAlertRules();
  const create = useCreateAnnotation(clusterId);
  const update = useUpdateAnnotation(clusterId);
  const remove = useDeleteAnnotation(clusterId);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [dragMode, setDragMode] = useState<"annotate" | "zoom">("annotate");
  const now = useNow(interval);

  const navigate = (next: Partial<ExplorerState>) => setParams(explorerSearch({ ...state, ...next }));

  if (!Number.isInteger(clusterId) || clusterId < 1) return <ProblemView error={new Error("no such cluster")} />;
  if (cluster.isPending) return <Loading what="the cluster" />;
  if (cluster.error) return <ProblemView error={cluster.error} what="the cluster" />;

  const channels = status.data?.channels ?? [];
  const colors = channelColors(channels);
  const first = lagSeries[0]?.data;
  // A streamed window's end advances with the clock and the newest sample, not with the fetch.
  const fallback = resolveWindow(window, Math.max(now, (feed.samples.at(-1)?.ts ?? 0) + 1));
  const startMs = streamed ? fallback.startMs : (first?.start ?? fallback.startMs);
  const endMs = streamed ? fallback.endMs : (first?.end ?? fallback.endMs);
  const pollIntervalS = cluster.data.poll_interval_s;
  const series = Object.fromEntries(lagParams.map((p, i) => [p.metric, lagSeries[i]?.data]));
  if (live) series.lag_s = mergeSamples(series.lag_s, feed.samples, "lag_s", startMs, endMs);
  const strip = Object.fromEntries(stripParams.map((p, i) => [p.metric, strips[i]?.data]));
  if (streamed) {
    strip.not_received = mergeSamples(strip.not_received, feed.samples, "not_received", startMs, endMs);
    strip.received_not_applied = mergeSamples(strip.received_not_applied, feed.samples, "received_not_applied", startMs, endMs);
  }

  const lagModel = buildLagChartModel({
    series,
    channels,
    colors,
    source: state.source,
    hidden: state.hidden,
    log: state.log,
    verdicts: verdicts.data,
    pollIntervalS,
    startMs,
    endMs,
  });
  const lanes = buildParamLanes(changes.data ?? [], replicas, startMs, endMs);
  const names = scopeNames(cluster.data, channels);
  const alertBands = buildAlertBands({
    events: alertEvents.data ?? [],
    firing: firing.data,
    rules: rules.data ?? [],
    names,
    hidden: state.hidden,
    channels,
    limit: CLUSTER_ALERT_EVENTS_LIMIT,
    startMs,
    endMs,
    nowMs: now,
  });
  const marks = buildAnnotationMarks(annotations.data ?? [], startMs, endMs, me.data, names);
  const decomposition = buildDecompositionModel({
    notReceived: strip.not_received,
    receivedNotApplied: strip.received_not_applied,
    verdicts: verdicts.data,
    channels,
    colors,
    hidden: state.hidden,
    pollIntervalS,
    startMs,
    endMs,
  });
  const rates = buildRateModel({
    sourceRate: strip.source_rate,
    applyRate: strip.apply_rate,
    channels,
    colors,
    hidden: state.hidden,
    pollIntervalS,
    endMs,
  });
  const instances = status.data?.instances ?? [];
  const instancePanels = buildInstancePanels({
    series: Object.fromEntries(instanceParams.map((p, i) => [p.metric, instanceSeries[i]?.data])),
    instances,
    colors: instanceColors(instances, channels, colors),
    pollIntervalS,
    endMs,
  });
  const warnings = [...durabilityWarnings(instances), ...heartbeatWarnings(instances)];
  const panels = buildChannelPanels(channels, colors, status.dataUpdatedAt || now);
  const explorerChannels = buildExplorerChannels(cluster.data, channels, colors);
  const source = cluster.data.instances.find((i) => i.role === "source");
  const writable = canWrite(me.data);
  const lagError = lagSeries.find((q) => q.error)?.error;
  const editing = draft?.editing != null ? annotations.data?.find((a) => a.id === draft.editing) : undefined;

  function select(fromMs: number, toMs: number) {
    if (dragMode === "zoom") {
      const zoom = zoomRange(fromMs, toMs, { startMs, endMs });
      if (zoom) navigate(zoomedIn(state, zoom.fromMs, zoom.toMs));
      return;
    }
    if (!writable) return;
    setDraft({ ...annotationDraft(fromMs, toMs, span / 200), editing: null });
  }

  function save(value: { text: string; tags: string[]; scope: string }) {
    if (!draft) return;
    const scope = scopeIds(value.scope);
    const done = { onSuccess: () => setDraft(null) };
    if (draft.editing !== null) {
      update.mutate({ id: draft.editing, body: { text: value.text, tags: value.tags, ...scope } }, done);
    } else {
      create.mutate(
        {
          cluster_id: clusterId,
          starts_at: new Date(draft.startsMs).toISOString(),
          ends_at: draft.endsMs === null ? null : new Date(draft.endsMs).toISOString(),
          text: value.text,
          tags: value.tags,
          ...scope,
        },
        done,
      );
    }
  }

  return (
    <section className="page explorer">
      <header className="explorer-head">
        <h1>
          <Link to="/" className="crumb">
            Overview
          </Link>{" "}
          / {cluster.data.name}
        </h1>
        <ClusterNav clusterId={clusterId} />
        {explorerChannels[0] ? <CompareWithLink clusterId={clusterId} channelId={explorerChannels[0].id} fromMs={startMs} toMs={endMs} /> : null}
        {source ? (
          <span className="muted head-source">
            source: {source.name}
            {source.region ? ` (${source.region})` : ""}
          </span>
        ) : null}
        <RangePicker
          state={state}
          live={live}
          stream={feed.status}
          startMs={startMs}
          endMs={endMs}
          onRange={(range) => navigate({ range, fromMs: null, toMs: null, zoomFrom: null })}
          onCustom={(fromMs, toMs) => navigate({ range: "custom", fromMs, toMs, zoomFrom: null })}
          onZoomOut={() => navigate({ range: "custom", ...zoomedOut(startMs, endMs, Date.now()) })}
          onResetZoom={() => navigate(zoomReset(state))}
        />
      </header>
      <ExplorerControls
        state={state}
        channels={explorerChannels}
        dragMode={dragMode}
        onToggle={(id) =>
          navigate({ hidden: state.hidden.includes(id) ? state.hidden.filter((h) => h !== id) : [...state.hidden, id] })
        }
        onSource={(s) => navigate({ source: s })}
        onLog={(log) => navigate({ log })}
        onDragMode={setDragMode}
      />
      <DurabilityBanner warnings={warnings} />
      <div className="explorer-body">
        <div className="explorer-main">
          <section className="panel" aria-labelledby="lag-title">
            <div className="panel-head">
              <h2 id="lag-title">How far behind is each replica?</h2>
              <span className="muted small">
                {writable
                  ? dragMode === "annotate"
                    ? "click the chart to annotate a moment, drag to annotate a range"
                    : "drag across the chart to zoom in"
                  : "read-only: annotations need an editor"}
              </span>
              {writable ? (
                <button type="button" onClick={() => setDraft({ startsMs: endMs, endsMs: null, editing: null })}>
                  Add annotation
                </button>
              ) : null}
            </div>
            <Legend model={lagModel} />
            {lagError ? <ProblemView error={lagError} what="the lag" /> : null}
            {lagSeries[0]?.isPending ? <Loading what="the lag" /> : null}
            {!lagSeries[0]?.isPending && lagModel.empty && !lagError ? (
              <Empty>No lag samples in this range yet{live ? ": the chart fills in as the replicas are polled" : ""}.</Empty>
            ) : null}
            <LagChart model={lagModel} markers={lanes.markers} annotations={marks} onSelect={select} dragMode={dragMode} alerts={alertBands} />
            <AlertBandList model={alertBands} />
            {lagModel.notes.length ? (
              <ul className="notes small muted">
                {lagModel.notes.map((n) => (
                  <li key={n}>{n}</li>
                ))}
              </ul>
            ) : null}
            <GapList model={lagModel} />
            {draft ? (
              <AnnotationForm
                key={`${draft.startsMs}-${draft.endsMs}-${draft.editing}`}
                title={draft.editing !== null ? "Edit annotation" : draft.endsMs === null ? "New point annotation" : "New range annotation"}
                startsMs={editing ? Date.parse(editing.starts_at) : draft.startsMs}
                endsMs={editing ? (editing.ends_at ? Date.parse(editing.ends_at) : null) : draft.endsMs}
                scopes={annotationScopes(cluster.data, channels)}
                initial={editing ? { text: editing.text, tags: editing.tags, scope: scopeOf(editing) } : undefined}
                pending={create.isPending || update.isPending}
                error={create.error ?? update.error}
                onSubmit={save}
                onCancel={() => setDraft(null)}
              />
            ) : null}
            <h3 className="sub">Parameter changes</h3>
            {changes.error ? <ProblemView error={changes.error} what="parameter changes" /> : <ParamLanes model={lanes} />}
            <h3 className="sub">Annotations</h3>
            {annotations.error ? <ProblemView error={annotations.error} what="annotations" /> : null}
            {remove.error ? <ProblemView error={remove.error} /> : null}
            <AnnotationList
              marks={marks}
              onEdit={(id) => setDraft({ startsMs: 0, endsMs: null, editing: id })}
              onDelete={(id) => remove.mutate(id)}
            />
          </section>
          <section className="panel" aria-labelledby="decomp-title" ref={stripRef}>
            <div className="panel-head">
              <h2 id="decomp-title">Is it the network or the apply?</h2>
              <DecompositionLegend />
            </div>
            {verdicts.error ? <ProblemView error={verdicts.error} what="verdicts" /> : null}
            {!stripSeen ? <Loading what="the backlog" /> : null}
            {(stripSeen ? decomposition : []).map((panel) => (
              <DecompositionChart key={panel.channelId} panel={panel} startMs={startMs} endMs={endMs} />
            ))}
          </section>
          <section className="panel" aria-labelledby="rates-title">
            <div className="panel-head">
              <h2 id="rates-title">Does each replica apply as fast as the source writes?</h2>
            </div>
            {stripSeen ? <RateChart model={rates} startMs={startMs} endMs={endMs} /> : null}
          </section>
          <section className="panel" aria-labelledby="instances-title" ref={instanceRef}>
            <div className="panel-head">
              <h2 id="instances-title">What does each server spend its writes on?</h2>
            </div>
            {instanceSeen ? (
              <InstancePanels panels={instancePanels} startMs={startMs} endMs={endMs} />
            ) : (
              <Loading what="the server panels" />
            )}
          </section>
        </div>
        {status.error ? <ProblemView error={status.error} what="the status" /> : <SidePanel panels={panels} />}
      </div>
    </section>
  );
}

function Legend({ model }: { model: ReturnType<typeof buildLagChartModel> }) {
  return (
    <div className="legend" aria-label="Lines">
      {model.lines.map((l) => (
        <span key={l.key}>
          <svg width="22" height="8" aria-hidden="true">
            <line x1="0" x2="22" y1="4" y2="4" stroke={l.color} strokeWidth="2" strokeDasharray={l.dash} />
          </svg>{" "}
          {l.label}
        </span>
      ))}
      {model.showBand ? <span className="muted small">shaded: min–max within each bucket</span> : null}
    </div>
  );
}

function GapList({ model }: { model: ReturnType<typeof buildLagChartModel> }) {
  if (model.gaps.length === 0) return null;
  return (
    <ul className="gap-list small" aria-label="Gaps in the lag lines">
      {model.gaps.map((g, i) => (
        <li key={i} data-gap-channel={g.label}>
          <span className="swatch" style={{ background: g.color }} aria-hidden="true" /> {g.label}: no lag — {g.reason}
        </li>
      ))}
    </ul>
  );
}
