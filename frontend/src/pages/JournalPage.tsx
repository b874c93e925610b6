// The tuning journal: every step in time order with its before/after figures per replica, the
// verdict and its reason, a chart of p95 per step, and the exports built from the same model.
import { useMemo } from "react";
import { useParams, useSearchParams } from "react-router";
import { useClusterStatus } from "../hooks/useClusterStatus";
import { useJournal } from "../hooks/useJournal";
import { formatDateTime, formatDuration } from "../format/format";
import { channelColors } from "../viewmodels/colors";
import { buildJournalModel, buildStepChartModel, journalCsv, journalMarkdown } from "../viewmodels/journal";
import {
  JOURNAL_RANGES,
  journalSearch,
  parseJournalQuery,
  WIDTHS_S,
  type JournalQuery,
  type JournalRange,
} from "../viewmodels/journalQuery";
import { ClusterNav } from "../components/ClusterNav";
import { downloadText, fileStamp } from "../components/download";
import { JournalTable } from "../components/JournalTable";
import { Empty, Loading, ProblemView } from "../components/States";
import { StepChart } from "../components/StepChart";

export function JournalPage() {
  const clusterId = Number(useParams().clusterId);
  const [params, setParams] = useSearchParams();
  const query = useMemo(() => parseJournalQuery(params), [params]);
  const status = useClusterStatus(clusterId, 10_000);
  const journal = useJournal(clusterId, query);
  const colors = useMemo(() => (status.data ? channelColors(status.data.channels) : undefined), [status.data]);
  const model = useMemo(() => (journal.data ? buildJournalModel(journal.data, colors) : null), [journal.data, colors]);
  const chart = useMemo(() => (model ? buildStepChartModel(model) : null), [model]);
  const clusterName = status.data?.name ?? `cluster ${clusterId}`;

  function update(next: Partial<JournalQuery>) {
    setParams(new URLSearchParams(journalSearch({ ...query, ...next }).slice(1)));
  }

  function exportAs(kind: "csv" | "md") {
    if (!model) return;
    const name = `lagscope-journal-${clusterName.replace(/[^\w.-]+/g, "_")}-${fileStamp(model.endMs)}`;
    if (kind === "csv") downloadText(`${name}.csv`, journalCsv(model), "text/csv;charset=utf-8");
    else downloadText(`${name}.md`, journalMarkdown(model, clusterName), "text/markdown;charset=utf-8");
  }

  return (
    <section className="page journal-page">
      <header className="page-head">
        <h1>Tuning journal · {clusterName}</h1>
        <ClusterNav clusterId={clusterId} />
      </header>
      <div className="toolbar" role="toolbar" aria-label="Journal range and exports">
        <div className="segmented" role="group" aria-label="Range">
          {(Object.keys(JOURNAL_RANGES) as JournalRange[]).map((range) => (
            <button
              key={range}
              type="button"
              aria-pressed={query.range === range}
              onClick={() => update({ range, fromMs: null, toMs: null })}
            >
              {range}
            </button>
          ))}
          {query.range === "custom" && query.fromMs !== null && query.toMs !== null ? (
            <span className="badge" aria-pressed="true">
              {formatDateTime(query.fromMs)} – {formatDateTime(query.toMs)}
            </span>
          ) : null}
        </div>
        <label className="inline">
          before/after windows
          <select value={query.widthS} onChange={(e) => update({ widthS: Number(e.target.value) })}>
            {[...new Set([...WIDTHS_S, query.widthS])]
              .sort((a, b) => a - b)
              .map((w) => (
                <option key={w} value={w}>
                  {formatDuration(w)}
                </option>
              ))}
          </select>
        </label>
        <span className="toolbar-end">
          <button type="button" onClick={() => exportAs("csv")} disabled={!model?.steps.length}>
            Download CSV
          </button>
          <button type="button" onClick={() => exportAs("md")} disabled={!model?.steps.length}>
            Download Markdown
          </button>
        </span>
      </div>
      {journal.error ? <ProblemView error={journal.error} what="the journal" /> : null}
      {journal.isPending ? <Loading what="the journal" /> : null}
      {model ? (
        <>
          <p className="muted journal-summary">
            {model.steps.length} {model.steps.length === 1 ? "step" : "steps"} between {formatDateTime(model.startMs)} and{" "}
            {formatDateTime(model.endMs)}. Each is judged on {formatDuration(query.widthS)} before against{" "}
            {formatDuration(query.widthS)} after, {formatDuration(query.settleS)} after the change left out to settle;
            parameter changes less than {formatDuration(query.groupS)} apart are one step. A <em>control</em> replica
            was not touched by the step: if it moved too, the load did it.
          </p>
          {model.truncated ? (
            <p className="state state-empty">More steps follow than one page holds: narrow the range to see them.</p>
          ) : null}
          {model.steps.length === 0 ? (
            <Empty>
              No steps in this range. A step is a parameter change Lagscope detects on any instance (
              <code>SET GLOBAL</code> …) or an annotation added in the explorer.
            </Empty>
          ) : (
            <>
              {chart ? <StepChart model={chart} /> : null}
              <JournalTable model={model} />
            </>
          )}
        </>
      ) : null}
    </section>
  );
}
