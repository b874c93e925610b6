// Appliers: are the replicas' workers really used (a workers × time heatmap per replica), and
// what group commit does on the source (commits per group, fsyncs, the durability lanes).
import { useMemo, useState } from "react";
import { useParams } from "react-router";
import { Area, AreaChart, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { ClusterNav } from "../components/ClusterNav";
import { Empty, Loading, ProblemView } from "../components/States";
import { CHART_MARGIN, Y_AXIS_WIDTH } from "../components/chartGeometry";
import { timeAxisProps } from "../components/TimeAxis";
import { axisTheme, LEGEND_STYLE, TOOLTIP_THEME } from "../components/chartTheme";
import { legendText } from "../components/legendText";
import { LAG_FILL, LAG_LINE, SERIES } from "../theme/palette";
import { WorkersHeatmap } from "../components/WorkersHeatmap";
import { formatCount, formatDateTime, formatDuration } from "../format/format";
import { useApplierWorkers, useGroupCommit } from "../hooks/useAppliers";
import { useCluster } from "../hooks/useCluster";
import { useSeries } from "../hooks/useSeries";
import {
  buildGroupCommitModel,
  buildHeatmapModel,
  buildLagStrip,
  type GroupCommitModel,
  type Share,
} from "../viewmodels/workers";

const RANGES = { "15m": 15 * 60_000, "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": 24 * 3_600_000 } as const;
type Range = keyof typeof RANGES;
const BUCKETS = 90;

export function WorkersPage() {
  const clusterId = Number(useParams().clusterId);
  const [range, setRange] = useState<Range>("15m");
  const [share, setShare] = useState<Share>("busy");
  const spanMs = RANGES[range];
  const cluster = useCluster(clusterId);
  const workers = useApplierWorkers(clusterId, spanMs, BUCKETS);
  const groupCommit = useGroupCommit(clusterId, spanMs, 300);
  const startMs = workers.data ? Date.parse(workers.data.start) : 0;
  const endMs = workers.data ? Date.parse(workers.data.end) : 0;
  const heatmaps = useMemo(
    () =>
      (workers.data?.instances ?? []).map((i) => ({
        instanceId: i.instance_id,
        model: buildHeatmapModel(i, startMs, endMs, workers.data?.bucket_ms ?? 1000, share),
      })),
    [workers.data, startMs, endMs, share],
  );
  const gc = useMemo(() => (groupCommit.data ? buildGroupCommitModel(groupCommit.data) : null), [groupCommit.data]);

  return (
    <section className="page workers-page">
      <header className="page-head">
        <h1>Appliers · {cluster.data?.name ?? `cluster ${clusterId}`}</h1>
        <ClusterNav clusterId={clusterId} />
      </header>
      <div className="toolbar" role="toolbar" aria-label="Range and share">
        <div className="segmented" role="group" aria-label="Range">
          {(Object.keys(RANGES) as Range[]).map((r) => (
            <button key={r} type="button" aria-pressed={range === r} onClick={() => setRange(r)}>
              {r}
            </button>
          ))}
        </div>
        <div className="segmented" role="group" aria-label="Share">
          <button type="button" aria-pressed={share === "busy"} onClick={() => setShare("busy")}>
            busy (holding a transaction)
          </button>
          <button type="button" aria-pressed={share === "active"} onClick={() => setShare("active")}>
            active (worked since the previous reading)
          </button>
        </div>
      </div>

      <h2>Are the workers really used?</h2>
      {workers.isPending ? <Loading what="applier workers" /> : null}
      {workers.isError ? <ProblemView error={workers.error} what="applier workers" /> : null}
      {workers.data && heatmaps.length === 0 ? <Empty>This cluster has no replicas.</Empty> : null}
      {heatmaps.map(({ model, instanceId }) => (
        <article key={instanceId} className="panel">
          <h3>{model.title}</h3>
          <p className="muted">{model.summary}</p>
          {model.problem ? (
            <p className="state state-error" role="alert">
              {model.problem}
            </p>
          ) : null}
          <LagStripView instanceId={instanceId} spanMs={spanMs} startMs={startMs} endMs={endMs} />
          {model.empty ? (
            model.problem ? null : <Empty>No worker readings in this range yet.</Empty>
          ) : (
            <WorkersHeatmap model={model} share={share} />
          )}
        </article>
      ))}

      <h2>Group commit on the source</h2>
      {groupCommit.isPending ? <Loading what="group commit" /> : null}
      {groupCommit.isError ? <ProblemView error={groupCommit.error} what="group commit" /> : null}
      {gc ? <GroupCommitView model={gc} startMs={Date.parse(groupCommit.data?.start ?? "")} endMs={Date.parse(groupCommit.data?.end ?? "")} /> : null}
    </section>
  );
}

/** The replica's lag over the same range, above its heatmap: do busier workers mean less lag? */
function LagStripView({ instanceId, spanMs, startMs, endMs }: { instanceId: number; spanMs: number; startMs: number; endMs: number }) {
  const lag = useSeries({ metric: "lag_s", instanceIds: [instanceId], window: { kind: "last", spanMs }, points: BUCKETS * 2 });
  const strip = useMemo(() => buildLagStrip(lag.data), [lag.data]);
  return (
    <div className="heatmap-row lag-strip">
      <span className="heatmap-label">lag (max {formatDuration(strip.maxS)})</span>
      <span className="heatmap-cells">
        <ResponsiveContainer width="100%" height={40}>
          <AreaChart data={strip.rows} margin={{ top: 2, right: 0, bottom: 0, left: 0 }}>
            <XAxis dataKey="t" type="number" domain={[startMs, endMs]} hide />
            <YAxis hide domain={[0, "auto"]} />
            <Area dataKey="lag" stroke={LAG_LINE} fill={LAG_FILL} isAnimationActive={false} connectNulls={false} />
            <Tooltip {...TOOLTIP_THEME} isAnimationActive={false} labelFormatter={(t) => formatDateTime(Number(t))} formatter={(v) => [formatDuration(Number(v)), "lag"]} />
          </AreaChart>
        </ResponsiveContainer>
      </span>
    </div>
  );
}

function GroupCommitView({ model, startMs, endMs }: { model: GroupCommitModel; startMs: number; endMs: number }) {
  const span = Math.max(1, endMs - startMs);
  return (
    <article className="panel" aria-label={model.title}>
      <h3>{model.title}</h3>
      {model.notes.map((n) => (
        <p key={n} className="muted">
          {n}
        </p>
      ))}
      {model.empty ? (
        <Empty>No counter rates in this range yet.</Empty>
      ) : (
        <>
          <ResponsiveContainer width="100%" height={180}>
            <LineChart data={model.rows} margin={CHART_MARGIN}>
              <XAxis {...timeAxisProps(startMs, endMs)} />
              <YAxis width={Y_AXIS_WIDTH} tickFormatter={formatCount} {...axisTheme(11)} />
              <Tooltip {...TOOLTIP_THEME} isAnimationActive={false} labelFormatter={(t) => formatDateTime(Number(t))} />
              <Legend wrapperStyle={LEGEND_STYLE} formatter={legendText} />
              <Line dataKey="commits" name="binlog commits/s" stroke={SERIES[0]} dot={false} isAnimationActive={false} />
              <Line dataKey="groups" name="group commits/s" stroke={SERIES[1]} dot={false} isAnimationActive={false} />
              <Line dataKey="logFsyncs" name="redo fsyncs/s" stroke={SERIES[2]} dot={false} isAnimationActive={false} />
              <Line dataKey="dataFsyncs" name="data fsyncs/s" stroke={SERIES[7]} dot={false} isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
          <ResponsiveContainer width="100%" height={120}>
            <LineChart data={model.rows} margin={CHART_MARGIN}>
              <XAxis {...timeAxisProps(startMs, endMs)} />
              <YAxis width={Y_AXIS_WIDTH} {...axisTheme(11)} />
              <Tooltip {...TOOLTIP_THEME} isAnimationActive={false} labelFormatter={(t) => formatDateTime(Number(t))} />
              <Legend wrapperStyle={LEGEND_STYLE} formatter={legendText} />
              <Line dataKey="perGroup" name="commits per group" stroke={SERIES[3]} dot={false} isAnimationActive={false} />
              <Line dataKey="semiSyncWaitMs" name="semi-sync wait (ms)" stroke={SERIES[6]} dot={false} isAnimationActive={false} />
            </LineChart>
          </ResponsiveContainer>
        </>
      )}
      {model.lanes.map((lane) => (
        <div className="lane" key={lane.name}>
          <span className="lane-label" title={lane.name}>
            {lane.name}
          </span>
          <span className="lane-bar">
            {lane.segments.map((s) => (
              <span
                key={s.startMs}
                className="lane-segment"
                style={{ left: `${((s.startMs - startMs) / span) * 100}%`, width: `${((s.endMs - s.startMs) / span) * 100}%` }}
                title={`${lane.name} = ${s.value} from ${formatDateTime(s.startMs)}`}
              >
                {s.value}
              </span>
            ))}
          </span>
        </div>
      ))}
    </article>
  );
}
