// The cluster lag explorer: lag chart with parameter lanes and annotations, receive vs apply,
// rates, and the replicas' latest status. Its state is in the URL; its data comes from
// useExplorerData, its view models from buildExplorerModel; this file lays them out.
import { useMemo, useRef, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { useCreateAnnotation, useDeleteAnnotation, useUpdateAnnotation } from "../hooks/useAnnotations";
import { useCluster } from "../hooks/useCluster";
import { useExplorerData } from "../hooks/useExplorerData";
import { useNow } from "../hooks/useNow";
import { useParallelism } from "../hooks/useParallelism";
import { annotationDraft } from "../viewmodels/annotations";
import { scopeIds, scopeOf } from "../viewmodels/explorer";
import { buildExplorerModel } from "../viewmodels/explorerModel";
import { buildParallelismView } from "../viewmodels/parallelism";
import {
  explorerSearch,
  FIT_STEP_MS,
  fitDefaultRange,
  parseExplorerState,
  zoomedIn,
  zoomedOut,
  zoomReset,
  type ExplorerState,
} from "../viewmodels/explorerState";
import { zoomRange } from "../viewmodels/zoom";
import { AlertBandList } from "../components/AlertBands";
import { AnnotationForm } from "../components/AnnotationForm";
import { AnnotationList } from "../components/AnnotationList";
import { DecompositionChart, DecompositionLegend } from "../components/DecompositionChart";
import { ExplorerControls, RangePicker } from "../components/ExplorerToolbar";
import { DurabilityBanner, InstancePanels } from "../components/InstancePanels";
import { GapList } from "../components/GapList";
import { LagChart } from "../components/LagChart";
import { Legend } from "../components/Legend";
import { ParamLanes } from "../components/ParamLanes";
import { WhyStrips } from "../components/WhyStrips";
import { RateChart } from "../components/RateChart";
import { ParallelismSection } from "../components/ParallelismSection";
import { SidePanel } from "../components/SidePanel";
import { ClusterNav } from "../components/ClusterNav";
import { CompareWithLink } from "../components/CompareWithLink";
import { Empty, Loading, ProblemView } from "../components/States";
import { downloadBlob } from "../components/download";
import { ExportButton } from "../components/ExportButton";
import { exportFileName } from "../export/fileName";
import { elementPngBlob } from "../export/png";

type Draft = { startsMs: number; endsMs: number | null; editing: number | null };

export function ClusterPage() {
  const clusterId = Number(useParams().clusterId);
  const [params, setParams] = useSearchParams();
  const asked = useMemo(() => parseExplorerState(params), [params]);
  // The default range fits young data (a fresh demo): from the cluster's creation to now.
  const created = useCluster(clusterId).data?.created_at;
  const minute = useNow(FIT_STEP_MS);
  const state = useMemo(
    () => fitDefaultRange(asked, created ? Date.parse(created) : null, minute),
    [asked, created, minute],
  );
  const explorer = useExplorerData(clusterId, state);
  const { cluster, data, errors, span, stripRef, stripSeen, instanceRef, instanceSeen } = explorer;
  const create = useCreateAnnotation(clusterId);
  const update = useUpdateAnnotation(clusterId);
  const remove = useDeleteAnnotation(clusterId);
  const parallelism = useParallelism(clusterId);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [dragMode, setDragMode] = useState<"annotate" | "zoom">("annotate");
  const lagPanel = useRef<HTMLElement>(null);

  const navigate = (next: Partial<ExplorerState>) => setParams(explorerSearch({ ...state, ...next }));

  if (!Number.isInteger(clusterId) || clusterId < 1) return <ProblemView error={new Error("no such cluster")} />;
  if (cluster.isPending) return <Loading what="the cluster" />;
  if (cluster.error || !data) return <ProblemView error={cluster.error ?? new Error("no such cluster")} what="the cluster" />;

  const model = buildExplorerModel(data, { state, nowMs: explorer.nowMs, streamed: explorer.streamed });
  const { live, startMs, endMs, writable, source } = model;
  const lagModel = model.lag;
  const parallelismView = parallelism.data
    ? buildParallelismView(parallelism.data, { nowMs: explorer.nowMs, channels: errors.status ? [] : data.status?.channels })
    : null;
  const editing = draft?.editing != null ? data.annotations.find((a) => a.id === draft.editing) : undefined;

  // The lag chart as a picture: the panel as shown (lines, alert bands, why strips, parameter
  // lanes, annotations), named after the replicas drawn and the range.
  async function exportLagPng() {
    if (!lagPanel.current) throw new Error("the chart is not shown");
    const replicas = model.channels.filter((c) => !state.hidden.includes(c.id)).map((c) => c.label);
    const name = exportFileName({ what: "lag", cluster: data?.cluster.name ?? "", replicas, fromMs: startMs, toMs: endMs, ext: "png" });
    downloadBlob(name, await elementPngBlob(lagPanel.current));
  }

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
          / {data.cluster.name}
        </h1>
        <ClusterNav clusterId={clusterId} />
        {model.channels[0] ? <CompareWithLink clusterId={clusterId} channelId={model.channels[0].id} fromMs={startMs} toMs={endMs} /> : null}
        {source ? (
          <span className="muted head-source">
            source: {source.name}
            {source.region ? ` (${source.region})` : ""}
          </span>
        ) : null}
        <RangePicker
          state={state}
          live={live}
          stream={explorer.stream}
          startMs={startMs}
          endMs={endMs}
          onRange={(range) => navigate({ range, fromMs: null, toMs: null, zoomFrom: null, chosen: true })}
          onCustom={(fromMs, toMs) => navigate({ range: "custom", fromMs, toMs, zoomFrom: null, chosen: true })}
          onZoomOut={() => navigate({ range: "custom", ...zoomedOut(startMs, endMs, Date.now()), chosen: true })}
          onResetZoom={() => navigate(zoomReset(state))}
        />
      </header>
      <ExplorerControls
        state={state}
        channels={model.channels}
        dragMode={dragMode}
        onToggle={(id) =>
          navigate({ hidden: state.hidden.includes(id) ? state.hidden.filter((h) => h !== id) : [...state.hidden, id] })
        }
        onSource={(s) => navigate({ source: s })}
        onLog={(log) => navigate({ log })}
        onDragMode={setDragMode}
      />
      <DurabilityBanner warnings={model.warnings} />
      <div className="explorer-body">
        <div className="explorer-main">
          <section className="panel" aria-labelledby="lag-title" ref={lagPanel}>
            <div className="panel-head">
              <h2 id="lag-title">How far behind is each replica?</h2>
              <span className="muted small" data-export="skip">
                {writable
                  ? dragMode === "annotate"
                    ? "click the chart to annotate a moment, drag to annotate a range"
                    : "drag across the chart to zoom in"
                  : "read-only: annotations need an editor"}
              </span>
              <span className="export-actions" data-export="skip">
                {writable ? (
                  <button type="button" onClick={() => setDraft({ startsMs: endMs, endsMs: null, editing: null })}>
                    Add annotation
                  </button>
                ) : null}
                <ExportButton label="Download PNG" make={exportLagPng} testId="export-lag-png" />
              </span>
            </div>
            <Legend items={lagModel.lines} label="Lines">
              {lagModel.showBand ? <span className="muted small">shaded: min–max within each bucket</span> : null}
            </Legend>
            {errors.lag ? <ProblemView error={errors.lag} what="the lag" /> : null}
            {explorer.lagPending ? <Loading what="the lag" /> : null}
            {!explorer.lagPending && lagModel.empty && !errors.lag ? (
              <Empty>No lag samples in this range yet{live ? ": the chart fills in as the replicas are polled" : ""}.</Empty>
            ) : null}
            <LagChart model={lagModel} markers={model.lanes.markers} annotations={model.marks} onSelect={select} dragMode={dragMode} alerts={model.alertBands} />
            <AlertBandList model={model.alertBands} />
            {lagModel.notes.length ? (
              <ul className="notes small muted">
                {lagModel.notes.map((n) => (
                  <li key={n}>{n}</li>
                ))}
              </ul>
            ) : null}
            <GapList model={lagModel} />
            <h3 className="sub why-head">
              Why is it behind?{" "}
              <Link to={`/clusters/${clusterId}/episodes`} className="small">
                all lag episodes
              </Link>
            </h3>
            {errors.causes ? <ProblemView error={errors.causes} what="the causes" /> : null}
            {explorer.causesPending ? <Loading what="the causes" /> : <WhyStrips strips={model.why.strips} />}
            {draft ? (
              <div data-export="skip">
                <AnnotationForm
                  key={`${draft.startsMs}-${draft.endsMs}-${draft.editing}`}
                  title={draft.editing !== null ? "Edit annotation" : draft.endsMs === null ? "New point annotation" : "New range annotation"}
                  startsMs={editing ? Date.parse(editing.starts_at) : draft.startsMs}
                  endsMs={editing ? (editing.ends_at ? Date.parse(editing.ends_at) : null) : draft.endsMs}
                  scopes={model.annotationScopes}
                  initial={editing ? { text: editing.text, tags: editing.tags, scope: scopeOf(editing) } : undefined}
                  pending={create.isPending || update.isPending}
                  error={create.error ?? update.error}
                  onSubmit={save}
                  onCancel={() => setDraft(null)}
                />
              </div>
            ) : null}
            <h3 className="sub">Parameter changes</h3>
            {errors.changes ? <ProblemView error={errors.changes} what="parameter changes" /> : <ParamLanes model={model.lanes} />}
            <h3 className="sub">Annotations</h3>
            {errors.annotations ? <ProblemView error={errors.annotations} what="annotations" /> : null}
            {remove.error ? <ProblemView error={remove.error} /> : null}
            <AnnotationList
              marks={model.marks}
              onEdit={(id) => setDraft({ startsMs: 0, endsMs: null, editing: id })}
              onDelete={(id) => remove.mutate(id)}
            />
          </section>
          <section className="panel" aria-labelledby="decomp-title" ref={stripRef}>
            <div className="panel-head">
              <h2 id="decomp-title">Is it the network or the apply?</h2>
              <DecompositionLegend />
            </div>
            {errors.verdicts ? <ProblemView error={errors.verdicts} what="verdicts" /> : null}
            {!stripSeen ? <Loading what="the backlog" /> : null}
            {(stripSeen ? model.decomposition : []).map((panel) => (
              <DecompositionChart key={panel.channelId} panel={panel} startMs={startMs} endMs={endMs} />
            ))}
          </section>
          <section className="panel" aria-labelledby="rates-title">
            <div className="panel-head">
              <h2 id="rates-title">Does each replica apply as fast as the source writes?</h2>
            </div>
            {stripSeen ? <RateChart model={model.rates} startMs={startMs} endMs={endMs} /> : null}
          </section>
          <section className="panel" aria-labelledby="instances-title" ref={instanceRef}>
            <div className="panel-head">
              <h2 id="instances-title">What does each server spend its writes on?</h2>
            </div>
            {instanceSeen ? (
              <InstancePanels panels={model.instancePanels} startMs={startMs} endMs={endMs} />
            ) : (
              <Loading what="the server panels" />
            )}
          </section>
        </div>
        <SidePanel panels={errors.status ? [] : model.panels} statusError={errors.status}>
          <ParallelismSection view={parallelismView} pending={parallelism.isPending} error={parallelism.error} />
        </SidePanel>
      </div>
    </section>
  );
}
