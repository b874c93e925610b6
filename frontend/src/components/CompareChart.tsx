import { lagAxisTick } from "../format/lagTicks";
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatDuration, formatDurationTick, formatTimeTick } from "../format/format";
import type { CompareModel } from "../viewmodels/compare";
import { axisTheme, GRID_STROKE, LEGEND_STYLE, TOOLTIP_THEME } from "./chartTheme";
import { legendText } from "./legendText";

/** Both lag lines on one axis; a null value is a gap, never a drop to 0. */
export function CompareChart({ model }: { model: CompareModel }) {
  const { chart } = model;
  const span = chart.xKind === "time" ? chart.domain[1] - chart.domain[0] : 0;
  const tick = (x: number) => (chart.xKind === "time" ? formatTimeTick(x, span) : `+${formatDurationTick(x)}`);
  const title =
    chart.xKind === "time"
      ? "Lag of both replicas on one clock"
      : "Lag in window a (baseline, dashed) and window b, from each window's start";
  return (
    <figure className="card chart-card" aria-label={title}>
      <figcaption>
        <h2>{title}</h2>
      </figcaption>
      <ResponsiveContainer width="100%" height={280}>
        <LineChart margin={{ top: 8, right: 16, bottom: 4, left: 8 }}>
          <CartesianGrid stroke={GRID_STROKE} />
          <XAxis
            type="number"
            dataKey="x"
            domain={chart.domain}
            allowDataOverflow
            tickFormatter={tick}
            {...axisTheme(12)}
            tickCount={8}
          />
          <YAxis tickFormatter={lagAxisTick} {...axisTheme(12)} width={52} />
          <Tooltip
            {...TOOLTIP_THEME}
            isAnimationActive={false}
            labelFormatter={(x) => (typeof x === "number" ? tick(x) : "")}
            formatter={(value) => (typeof value === "number" ? formatDuration(value) : "no value")}
          />
          <Legend wrapperStyle={LEGEND_STYLE} formatter={legendText} />
          {chart.lines.map((line) => (
            <Line
              key={line.key}
              data={line.points}
              dataKey="y"
              name={line.label}
              stroke={line.color}
              strokeWidth={line.dashed ? 1.5 : 2}
              strokeDasharray={line.dashed ? "6 4" : undefined}
              dot={false}
              connectNulls={false}
              isAnimationActive={false}
              type="linear"
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
