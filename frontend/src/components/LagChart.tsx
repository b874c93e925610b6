// The lag chart: draws a LagChartModel (lines, bands, gaps), the parameter-change markers, the
// annotations and the drag preview. Pointer → time uses the shared geometry (chartGeometry.ts).
import { useId, useMemo, useRef, useState, type MouseEvent } from "react";
import {
  Area,
  ComposedChart,
  ReferenceArea,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
  ZIndexLayer,
  usePlotArea,
  useXAxisScale,
  useYAxisScale,
} from "recharts";
import { formatDateTime, formatDurationTick } from "../format/format";
import { alertsAt, type AlertBandsModel } from "../viewmodels/alertBands";
import type { AnnotationMark } from "../viewmodels/annotations";
import { LOG_FLOOR_S, linePath, rowAt, tooltipEntries, type LagChartModel, type LagLine } from "../viewmodels/lagChart";
import type { ChangeMarker } from "../viewmodels/paramLanes";
import { timeAtPx } from "../viewmodels/zoom";
import { cursorHandlers } from "./chartCursor";
import { CHART_MARGIN, RIGHT_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";
import { timeAxisProps } from "./TimeAxis";
import { axisTheme, TOOLTIP_THEME } from "./chartTheme";
import { ACCENT, ANNOTATION, ANNOTATION_FILL, CHART_DRAG_ZOOM, PARAM } from "../theme/palette";

const EXPLORER_CURSOR = cursorHandlers("explorer");

interface Props {
  model: LagChartModel;
  markers: readonly ChangeMarker[];
  annotations: readonly AnnotationMark[];
  height?: number;
  /** A click (from = to) or a drag on the plot, in epoch ms. */
  onSelect?: (fromMs: number, toMs: number) => void;
  /** What a drag does: only the cursor and the preview's colour differ here. */
  dragMode?: "annotate" | "zoom";
  /** Firing alerts, drawn as translucent bands behind the lines. */
  alerts?: AlertBandsModel;
}

const NO_ALERTS: AlertBandsModel = { bands: [], note: null };

export function LagChart({ model, markers, annotations, height = 300, onSelect, dragMode = "annotate", alerts = NO_ALERTS }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);

  function timeAt(event: MouseEvent): number | null {
    const rect = box.current?.getBoundingClientRect();
    if (!rect) return null;
    return timeAtPx(event.clientX - rect.left - Y_AXIS_WIDTH, rect.width - Y_AXIS_WIDTH - RIGHT_MARGIN, model.startMs, model.endMs);
  }

  const down = (event: MouseEvent) => {
    if (event.button !== 0 || !onSelect) return;
    const t = timeAt(event);
    if (t !== null) setDrag({ from: t, to: t });
  };
  const move = (event: MouseEvent) => {
    if (!drag) return;
    const t = timeAt(event);
    if (t !== null) setDrag({ ...drag, to: t });
  };
  // The drag ends where the button is released, not where the last rendered move left it.
  const up = (event: MouseEvent) => {
    if (drag && onSelect) onSelect(drag.from, timeAt(event) ?? drag.to);
    setDrag(null);
  };

  return (
    <div
      ref={box}
      className={dragMode === "zoom" ? "lag-chart drag-zoom" : "lag-chart"}
      data-testid="lag-chart"
      data-lines={model.lines.length}
      data-start-ms={model.startMs}
      data-end-ms={model.endMs}
      data-last-t={model.rows.at(-1)?.t}
      onMouseDown={down}
      onMouseMove={move}
      onMouseUp={up}
      onMouseLeave={() => setDrag(null)}
    >
      <ResponsiveContainer width="100%" height={height}>
        <ComposedChart data={model.rows} margin={CHART_MARGIN} syncId="explorer" syncMethod="value" {...EXPLORER_CURSOR}>
          <XAxis {...timeAxisProps(model.startMs, model.endMs)} />
          <YAxis
            width={Y_AXIS_WIDTH}
            scale={model.log ? "log" : "linear"}
            // The lines are not Recharts items (see LagLines): the top comes from the model, and
            // a domain without items needs allowDataOverflow.
            domain={model.log ? [LOG_FLOOR_S, model.yTop ?? "auto"] : [0, model.yTop ?? "auto"]}
            allowDataOverflow={model.log || model.yTop !== null}
            tickFormatter={formatDurationTick}
            {...axisTheme(11)}
          />
          {model.gaps.map((gap, i) => (
            <ReferenceArea
              key={`gap-${i}`}
              x1={gap.fromMs}
              x2={gap.toMs}
              fill={gap.color}
              fillOpacity={0.07}
              ifOverflow="hidden"
            />
          ))}
          {alerts.bands.map((b) => (
            <ReferenceArea
              key={`alert-${b.key}`}
              x1={b.drawFromMs}
              x2={b.drawToMs}
              fill={b.color}
              fillOpacity={0.1}
              ifOverflow="hidden"
              label={<AlertBandLabel title={b.label} severity={b.severity} color={b.color} />}
            />
          ))}
          {markers.map((m) => (
            <ReferenceArea
              key={`win-${m.id}`}
              x1={m.windowFromMs}
              x2={m.t}
              fill={PARAM}
              fillOpacity={0.15}
              ifOverflow="hidden"
            />
          ))}
          {annotations
            .filter((a) => a.kind === "range")
            .map((a) => (
              <ReferenceArea
                key={`ann-${a.id}`}
                x1={a.drawFromMs}
                x2={a.drawToMs}
                fill={ANNOTATION_FILL}
                fillOpacity={0.12}
                stroke={ANNOTATION}
                strokeOpacity={0.4}
                ifOverflow="hidden"
              />
            ))}
          {model.lines.map((line) =>
            line.bandKey ? (
              <Area
                key={line.bandKey}
                dataKey={line.bandKey}
                stroke="none"
                fill={line.color}
                fillOpacity={0.15}
                isAnimationActive={false}
                connectNulls={false}
                activeDot={false}
              />
            ) : null,
          )}
          <LagLines lines={model.lines} />
          {markers.map((m) => (
            <ReferenceLine
              key={`mark-${m.id}`}
              x={m.t}
              stroke={PARAM}
              strokeDasharray="3 3"
              ifOverflow="hidden"
              label={<MarkerLabel glyph="◆" color={PARAM} title={`${m.title} — ${m.detail}`} kind="param-change" />}
            />
          ))}
          {annotations.map((a) => (
            <ReferenceLine
              key={`annl-${a.id}`}
              x={a.drawFromMs}
              stroke={ANNOTATION}
              ifOverflow="hidden"
              label={<MarkerLabel glyph="▲" color={ANNOTATION} title={a.title} kind="annotation" />}
            />
          ))}
          {drag && Math.abs(drag.to - drag.from) > 0 ? (
            <ReferenceArea x1={Math.min(drag.from, drag.to)} x2={Math.max(drag.from, drag.to)} fill={dragMode === "zoom" ? CHART_DRAG_ZOOM : ACCENT} fillOpacity={0.15} />
          ) : null}
          <Tooltip
            cursor={TOOLTIP_THEME.cursor}
            isAnimationActive={false}
            content={({ label }) => (
              <LagTooltip model={model} alerts={alerts} t={Number(label)} />
            )}
          />
        </ComposedChart>
      </ResponsiveContainer>
    </div>
  );
}

interface MarkerLabelProps {
  glyph: string;
  color: string;
  title: string;
  kind: string;
  viewBox?: { x?: number; y?: number; height?: number };
}

/** A glyph at the foot of a reference line; its hover text is the whole story. */
function MarkerLabel({ glyph, color, title, kind, viewBox }: MarkerLabelProps) {
  const x = viewBox?.x ?? 0;
  const y = (viewBox?.y ?? 0) + (viewBox?.height ?? 0) - 4;
  return (
    <g className={`chart-marker marker-${kind}`} data-kind={kind}>
      <title>{title}</title>
      <text x={x} y={y} textAnchor="middle" fill={color} fontSize={13}>
        {glyph}
      </text>
    </g>
  );
}

interface AlertBandLabelProps {
  title: string;
  severity: string;
  color: string;
  viewBox?: { x?: number; y?: number };
}

/** A flag at the band's top-left corner; its hover text says severity, rule, subject and when. */
function AlertBandLabel({ title, severity, color, viewBox }: AlertBandLabelProps) {
  return (
    <g className="chart-alert-band" data-severity={severity}>
      <title>{title}</title>
      <text x={(viewBox?.x ?? 0) + 2} y={(viewBox?.y ?? 0) + 11} fill={color} fontSize={11}>
        ⚠ {severity}
      </text>
    </g>
  );
}

/** The lines, one precomputed SVG path each (linePath) through the chart's own scales, clipped
 * to the plot and drawn where Recharts draws its lines. Recharts' Line spent several objects per
 * point; 20 lines × 2,000 points took 0.7–1.4 s to draw that way. */
function LagLines({ lines }: { lines: readonly LagLine[] }) {
  const x = useXAxisScale();
  const y = useYAxisScale();
  const plot = usePlotArea();
  const clip = `lag-lines-${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const paths = useMemo(
    () => (x && y ? lines.map((line) => linePath(line.points, (t) => x(t), (v) => y(v))) : []),
    [lines, x, y],
  );
  if (!x || !y || !plot) return null;
  return (
    <ZIndexLayer zIndex={400}>
      <defs>
        <clipPath id={clip}>
          <rect x={plot.x} y={plot.y} width={plot.width} height={plot.height} />
        </clipPath>
      </defs>
      <g className="recharts-line lag-lines" clipPath={`url(#${clip})`}>
        {lines.map((line, i) => (
          <path
            key={line.key}
            className="recharts-curve recharts-line-curve"
            data-line={line.key}
            d={paths[i]}
            fill="none"
            stroke={line.color}
            strokeDasharray={line.dash}
            strokeWidth={1.6}
          />
        ))}
      </g>
    </ZIndexLayer>
  );
}

function LagTooltip({ model, alerts, t }: { model: LagChartModel; alerts: AlertBandsModel; t: number }) {
  if (!Number.isFinite(t)) return null;
  const row = rowAt(model, t);
  return (
    <div className="chart-tooltip">
      <div className="muted">{formatDateTime(t)}</div>
      {tooltipEntries(model, row, t).map((e) => (
        <div key={e.key} className={e.missing ? "tooltip-missing" : undefined}>
          <span className="swatch" style={{ background: e.color }} aria-hidden="true" /> {e.label}:{" "}
          <strong>{e.text}</strong>
        </div>
      ))}
      {alertsAt(alerts, t).map((b) => (
        <div key={b.key} className="tooltip-alert">
          ⚠ {b.severity}: {b.ruleName} on {b.subject}
        </div>
      ))}
    </div>
  );
}
