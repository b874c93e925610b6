import { Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatCount, formatDateTime, formatRate } from "../format/format";
import type { RateModel } from "../viewmodels/decomposition";
import { Legend } from "./Legend";
import { cursorHandlers } from "./chartCursor";
import { CHART_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";
import { axisTheme, TOOLTIP_THEME } from "./chartTheme";
import { timeAxisProps } from "./TimeAxis";

const EXPLORER_CURSOR = cursorHandlers("explorer");

export function RateChart({ model, startMs, endMs }: { model: RateModel; startMs: number; endMs: number }) {
  if (model.empty) return <p className="muted strip-empty">No rates in this range.</p>;
  return (
    <div>
      <Legend items={model.lines} />
      <ResponsiveContainer width="100%" height={140}>
        <LineChart data={model.rows} margin={CHART_MARGIN} syncId="explorer" syncMethod="value" {...EXPLORER_CURSOR}>
          <XAxis {...timeAxisProps(startMs, endMs)} />
          <YAxis width={Y_AXIS_WIDTH} tickFormatter={formatCount} {...axisTheme(11)} />
          {model.lines.map((l) => (
            <Line key={l.key} dataKey={l.key} name={l.label} stroke={l.color} strokeDasharray={l.dash} dot={false} isAnimationActive={false} connectNulls={false} strokeWidth={1.5} />
          ))}
          <Tooltip
            {...TOOLTIP_THEME}
            isAnimationActive={false}
            labelFormatter={(t) => formatDateTime(Number(t))}
            formatter={(value, name) => [formatRate(Number(value), "trx"), name]}
          />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}
