import { Bar, BarChart, CartesianGrid, LabelList, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { lagAxisTick } from "../format/lagTicks";
import type { StepChartModel } from "../viewmodels/journal";
import { MUTED } from "../theme/palette";
import { axisTheme, GRID_STROKE, LEGEND_STYLE, TOOLTIP_THEME } from "./chartTheme";
import { legendText } from "./legendText";

/** p95 lag per step per replica, as grouped bars; the chart derives nothing from the data. */
export function StepChart({ model }: { model: StepChartModel }) {
  if (model.empty) return null;
  const data = model.rows.map((row) => ({ category: row.category, title: row.title, ...row.values }));
  return (
    <figure className="card chart-card" aria-label={model.title}>
      <figcaption>
        <h2>{model.title}</h2>
      </figcaption>
      <ResponsiveContainer width="100%" height={240}>
        <BarChart data={data} margin={{ top: 18, right: 16, bottom: 4, left: 8 }} barCategoryGap="20%">
          <CartesianGrid vertical={false} stroke={GRID_STROKE} />
          <XAxis dataKey="category" {...axisTheme(12)} />
          <YAxis tickFormatter={lagAxisTick} {...axisTheme(12)} width={48} />
          <Tooltip
            {...TOOLTIP_THEME}
            formatter={(value) => (typeof value === "number" ? `${value} ${model.unit}` : "no data")}
            labelFormatter={(_, payload) => {
              const first = payload?.[0]?.payload as { title?: string } | undefined;
              return first?.title ?? "";
            }}
            isAnimationActive={false}
          />
          <Legend wrapperStyle={LEGEND_STYLE} formatter={legendText} />
          {model.series.map((s) => (
            <Bar key={s.key} dataKey={s.key} name={s.label} fill={s.color} isAnimationActive={false} maxBarSize={42}>
              <LabelList dataKey={s.key} position="top" fontSize={11} fill={MUTED} />
            </Bar>
          ))}
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}
