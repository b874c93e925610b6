// Compare: two replicas over one window (is the far one behind because of the network?) or one
// replica in two windows (did the step help?), overlaid, statistics side by side, one verdict.
import { useMemo, useState } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { useComparePageData } from "../hooks/useComparePageData";
import type { CompareModel } from "../viewmodels/compare";
import { channelsModeQuery, comparePageModel, windowsModeQuery } from "../viewmodels/comparePage";
import { COMPARE_RANGES, compareSearch, parseCompareQuery, type CompareQuery, type CompareRange } from "../viewmodels/compareQuery";
import { ClusterNav } from "../components/ClusterNav";
import { CompareChart } from "../components/CompareChart";
import { ImpactBadge } from "../components/ImpactBadge";
import { Empty, Loading, ProblemView } from "../components/States";

/** epoch ms ↔ the value of an <input type="datetime-local"> (the browser's time zone). */
function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function fromLocalInput(text: string): number | null {
  const ms = new Date(text).getTime();
  return Number.isNaN(ms) ? null : ms;
}

export function ComparePage() {
  const clusterId = Number(useParams().clusterId);
  const [params, setParams] = useSearchParams();
  const query = useMemo(() => parseCompareQuery(params), [params]);
  // A named range ("last hour") is read once, when the page opens or the user asks again.
  const [nowMs, setNowMs] = useState(() => Date.now());
  const { status, compare, data } = useComparePageData(clusterId, query, nowMs);
  const view = comparePageModel(data);
  const { picks, model } = view;
  const first = picks.first;

  function update(next: CompareQuery) {
    setParams(new URLSearchParams(compareSearch(next).slice(1)));
  }

  return (
    <section className="page compare-page">
      <header className="page-head">
        <h1>Compare · {view.clusterName}</h1>
        <ClusterNav clusterId={clusterId} />
      </header>
      {status.error ? <ProblemView error={status.error} what="the cluster" /> : null}
      {status.isPending ? <Loading what="the cluster" /> : null}
      {view.noChannels ? <Empty>This cluster has no replica channel to compare yet.</Empty> : null}
      {first ? (
        <div className="toolbar" role="toolbar" aria-label="What to compare">
          <div className="segmented" role="group" aria-label="Comparison">
            <button
              type="button"
              aria-pressed={query.mode === "channels"}
              onClick={() => update(channelsModeQuery(picks))}
            >
              two replicas, one window
            </button>
            <button
              type="button"
              aria-pressed={query.mode === "windows"}
              onClick={() => update(windowsModeQuery(picks, Date.now()))}
            >
              one replica, two windows
            </button>
          </div>
          <label className="inline">
            {query.mode === "channels" ? "replica a" : "replica"}
            <select value={first.id} onChange={(e) => update({ ...query, channelId: Number(e.target.value) })}>
              {view.options.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name}
                </option>
              ))}
            </select>
          </label>
          {query.mode === "channels" ? (
            <>
              <label className="inline">
                replica b
                <select
                  value={picks.other?.id ?? ""}
                  onChange={(e) => update({ ...query, channelId: first.id, otherId: Number(e.target.value) })}
                >
                  {view.otherOptions.map((o) => (
                    <option key={o.id} value={o.id}>
                      {o.name}
                    </option>
                  ))}
                </select>
              </label>
              <div className="segmented" role="group" aria-label="Window">
                {(Object.keys(COMPARE_RANGES) as CompareRange[]).map((range) => (
                  <button
                    key={range}
                    type="button"
                    aria-pressed={query.range === range}
                    onClick={() => {
                      setNowMs(Date.now());
                      update({ ...query, range, span: null });
                    }}
                  >
                    last {range}
                  </button>
                ))}
              </div>
              {query.range !== "custom" ? (
                <button type="button" onClick={() => setNowMs(Date.now())}>
                  Refresh
                </button>
              ) : null}
            </>
          ) : (
            <WindowInputs query={query} onChange={update} />
          )}
        </div>
      ) : null}
      {view.onlyOne ? (
        <Empty>Only one replica channel: nothing to compare it with. Compare two of its windows instead.</Empty>
      ) : null}
      {compare.error ? <ProblemView error={compare.error} what="the comparison" /> : null}
      {picks.request && compare.isPending ? <Loading what="the comparison" /> : null}
      {model ? <CompareView model={model} clusterId={clusterId} /> : null}
    </section>
  );
}

function WindowInputs({
  query,
  onChange,
}: {
  query: Extract<CompareQuery, { mode: "windows" }>;
  onChange: (next: CompareQuery) => void;
}) {
  const field = (which: "a" | "b", edge: "startMs" | "endMs", label: string) => (
    <label className="inline">
      {label}
      <input
        type="datetime-local"
        step={1}
        value={toLocalInput(query[which][edge])}
        onChange={(e) => {
          const ms = fromLocalInput(e.target.value);
          if (ms === null) return;
          const span = { ...query[which], [edge]: ms };
          if (span.startMs < span.endMs) onChange({ ...query, [which]: span });
        }}
      />
    </label>
  );
  return (
    <div className="window-inputs">
      <span>
        {field("a", "startMs", "a from")} {field("a", "endMs", "to")}
      </span>
      <span>
        {field("b", "startMs", "b from")} {field("b", "endMs", "to")}
      </span>
    </div>
  );
}

function CompareView({ model, clusterId }: { model: CompareModel; clusterId: number }) {
  const [a, b] = model.sides;
  return (
    <>
      <section className="card compare-verdict" aria-label="Verdict">
        <h2>{model.question}</h2>
        <p className="verdict-line">
          <ImpactBadge info={model.verdict} /> <span className="sentence">{model.sentence}</span>
        </p>
        <ul className="compare-sides">
          {model.sides.map((side) => (
            <li key={side.key} data-side={side.key}>
              <svg width="22" height="10" aria-hidden="true">
                <line x1="0" x2="22" y1="5" y2="5" stroke={side.color} strokeWidth="2.5" strokeDasharray={side.dashed ? "5 3" : undefined} />
              </svg>{" "}
              <strong>{side.key}</strong> {side.label}
              {side.region ? <span className="badge region">{side.region}</span> : null}{" "}
              <span className="muted num">{side.window}</span>
            </li>
          ))}
        </ul>
      </section>
      <CompareChart model={model} />
      <div className="compare-grid">
        <table className="stats card" aria-label="Statistics side by side">
          <thead>
            <tr>
              <th scope="col" />
              <th scope="col" className="num">
                {a.header}
              </th>
              <th scope="col" className="num">
                {b.header}
              </th>
              <th scope="col" className="num">
                b against a
              </th>
            </tr>
          </thead>
          <tbody>
            {model.rows.map((row) => (
              <tr key={row.label}>
                <th scope="row">{row.label}</th>
                <td className="num">{row.a}</td>
                <td className="num">{row.b}</td>
                <td className="num muted">{row.change}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <figure className="card backlog-split" aria-label="Where the backlog waits">
          <figcaption>
            <h2>Where does the backlog wait? Not received (network) or received, not applied (apply)</h2>
          </figcaption>
          {model.backlog.map((row) => (
            <div key={row.key} className="split-row" data-side={row.key}>
              <span className="split-label">
                <strong>{row.key}</strong> {row.label}
              </span>
              <span className="split-bar" role="img" aria-label={`${row.label}: ${row.notReceived.toFixed(0)} not received, ${row.queued.toFixed(0)} received not applied (mean trx)`}>
                <span className="seg seg-missing" style={{ width: `${row.notReceivedShare * 100}%` }} />
                <span className="seg seg-queued" style={{ width: `${row.queuedShare * 100}%` }} />
              </span>
              <span className="num split-figures">
                {row.notReceived.toFixed(0)} not received · {row.queued.toFixed(0)} not applied
              </span>
            </div>
          ))}
          <p className="muted legend">
            <span className="seg-key seg-missing" /> not received (network / relay-log writes){"  "}
            <span className="seg-key seg-queued" /> received, not applied (applier) — mean transactions waiting
          </p>
        </figure>
      </div>
      <p className="muted">
        <Link to={`/clusters/${clusterId}/journal`}>Tuning journal</Link> — every step with its before/after windows.
      </p>
    </>
  );
}
