import { Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatBytesRate, formatCount, formatDateTime, formatRate } from "../format/format";
import type { DurabilityWarning, InstancePanel, PanelUnit } from "../viewmodels/instancePanels";
import { Legend } from "./Legend";
import { CHART_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";
import { axisTheme, TOOLTIP_THEME } from "./chartTheme";
import { timeAxisProps } from "./TimeAxis";

const TICK: Record<PanelUnit, (v: number) => string> = {
  per_s: formatCount,
  bytes_per_s: (v) => formatBytesRate(v).replace("/s", ""),
  ratio: formatCount,
  ms: (v) => `${formatCount(v)} ms`,
};
const VALUE: Record<PanelUnit, (v: number) => string> = {
  per_s: (v) => formatRate(v),
  bytes_per_s: formatBytesRate,
  ratio: (v) => `${formatCount(v)} per group`,
  ms: (v) => `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms`,
};

export function DurabilityBanner({ warnings }: { warnings: readonly DurabilityWarning[] }) {
  if (warnings.length === 0) return null;
  return (
    <div className="banner tone-bad" role="alert">
      {warnings.map((w, i) => (
        <p key={i}>
          <span aria-hidden="true">⚠ </span>
          {w.text}
        </p>
      ))}
    </div>
  );
}

export function InstancePanels({ panels, startMs, endMs }: { panels: readonly InstancePanel[]; startMs: number; endMs: number }) {
  return (
    <div className="instance-panels">
      {panels.map((panel) => (
        <figure key={panel.key} className="instance-panel" aria-label={panel.title}>
          <figcaption>{panel.title}</figcaption>
          {panel.empty ? (
            <p className="muted small">{panel.emptyText}</p>
          ) : (
            <>
              <Legend items={panel.lines} width={18} />
              <ResponsiveContainer width="100%" height={110}>
                <LineChart data={panel.rows} margin={CHART_MARGIN}>
                  <XAxis {...timeAxisProps(startMs, endMs, 4)} />
                  <YAxis width={Y_AXIS_WIDTH} tickFormatter={TICK[panel.unit]} {...axisTheme(11)} />
                  {panel.lines.map((l) => (
                    <Line key={l.key} dataKey={l.key} name={l.label} stroke={l.color} strokeDasharray={l.dash} dot={false} isAnimationActive={false} connectNulls={false} strokeWidth={1.4} />
                  ))}
                  <Tooltip
                    {...TOOLTIP_THEME}
                    isAnimationActive={false}
                    labelFormatter={(t) => formatDateTime(Number(t))}
                    formatter={(value, name) => [VALUE[panel.unit](Number(value)), name]}
                  />
                </LineChart>
              </ResponsiveContainer>
            </>
          )}
        </figure>
      ))}
    </div>
  );
}
