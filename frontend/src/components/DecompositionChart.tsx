// Per replica: transactions not received vs received-but-not-applied, stacked, and the verdict
// band under them. Answers "is it the network or the apply?".
import { Area, AreaChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { formatCount, formatDateTime } from "../format/format";
import type { DecompositionPanel } from "../viewmodels/decomposition";
import { Legend } from "./Legend";
import { cursorHandlers } from "./chartCursor";
import { NOT_APPLIED, NOT_RECEIVED } from "../theme/palette";
import { CHART_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";
import { axisTheme, TOOLTIP_THEME } from "./chartTheme";
import { timeAxisProps } from "./TimeAxis";
import { VerdictBand } from "./VerdictBand";

const EXPLORER_CURSOR = cursorHandlers("explorer");

export function DecompositionChart({ panel, startMs, endMs }: { panel: DecompositionPanel; startMs: number; endMs: number }) {
  return (
    <div className="decomposition" data-channel={panel.label}>
      <div className="strip-title">
        <span className="swatch" style={{ background: panel.color }} aria-hidden="true" /> {panel.label}
      </div>
      {panel.empty ? (
        <p className="muted strip-empty">No backlog samples in this range.</p>
      ) : (
        <ResponsiveContainer width="100%" height={90}>
          <AreaChart data={panel.rows} margin={CHART_MARGIN} syncId="explorer" syncMethod="value" {...EXPLORER_CURSOR}>
            <XAxis {...timeAxisProps(startMs, endMs)} hide />
            <YAxis width={Y_AXIS_WIDTH} tickFormatter={formatCount} {...axisTheme(11)} />
            <Area dataKey="nr" name="not received" stackId="b" stroke={NOT_RECEIVED} fill={NOT_RECEIVED} fillOpacity={0.5} isAnimationActive={false} connectNulls={false} />
            <Area dataKey="rna" name="received, not applied" stackId="b" stroke={NOT_APPLIED} fill={NOT_APPLIED} fillOpacity={0.5} isAnimationActive={false} connectNulls={false} />
            <Tooltip
              {...TOOLTIP_THEME}
              isAnimationActive={false}
              labelFormatter={(t) => formatDateTime(Number(t))}
              formatter={(value, name) => [`${formatCount(Number(value))} trx`, name]}
            />
          </AreaChart>
        </ResponsiveContainer>
      )}
      <VerdictBand band={panel.band} label={`verdict of ${panel.label}`} />
    </div>
  );
}

const BACKLOG_KEY = [
  { key: "nr", label: "not received yet (network / source)", color: NOT_RECEIVED },
  { key: "rna", label: "received, not applied (apply)", color: NOT_APPLIED },
];

export function DecompositionLegend() {
  return <Legend items={BACKLOG_KEY} mark="swatch" />;
}
