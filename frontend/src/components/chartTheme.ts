// Recharts' own colours (axis text and lines, grid, tooltip box, hover cursor) from the theme:
// its defaults are fixed greys drawn for a white page, unreadable on the dark one.
import { CHART_AXIS, CHART_AXIS_LINE, CHART_CURSOR, CHART_GRID, INK, LINE, PANEL } from "../theme/palette";

/** Props for an XAxis or YAxis: themed tick text at `fontSize`, themed axis and tick lines. */
export function axisTheme(fontSize = 11) {
  return {
    tick: { fontSize, fill: CHART_AXIS },
    axisLine: { stroke: CHART_AXIS_LINE },
    tickLine: { stroke: CHART_AXIS_LINE },
  };
}

export const GRID_STROKE = CHART_GRID;

/** Props for a Tooltip with Recharts' default content. */
export const TOOLTIP_THEME = {
  contentStyle: { backgroundColor: PANEL, border: `1px solid ${LINE}`, color: INK, borderRadius: 6, fontSize: 12 },
  labelStyle: { color: INK },
  cursor: { stroke: CHART_CURSOR },
} as const;

/** Recharts' Legend text follows each series' colour; its box gets the page's ink for the rest. */
export const LEGEND_STYLE = { fontSize: 12, color: INK } as const;
