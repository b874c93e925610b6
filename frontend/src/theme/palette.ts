// The theme's colours as charts and view models pass them around: references to the custom
// properties of styles.css, so one value is right in both themes and switching theme repaints
// without rebuilding a model or re-rendering a chart. (SVG presentation attributes and inline
// styles both resolve var(); the PNG export inlines the computed colours.)
const token = (name: string) => `var(--${name})`;

export const INK = token("ink");
export const MUTED = token("muted");
export const PANEL = token("panel");
export const LINE = token("line");
export const ACCENT = token("accent");
export const OK = token("ok");
export const WARN = token("warn");
export const BAD = token("bad");
/** A tracked parameter's change: its marker, its window, its lane. */
export const PARAM = token("param");
export const ANNOTATION = token("annotation");
export const ANNOTATION_FILL = token("annotation-fill");

export const CHART_AXIS = token("chart-axis");
export const CHART_AXIS_LINE = token("chart-axis-line");
export const CHART_GRID = token("chart-grid");
export const CHART_CURSOR = token("chart-cursor");
export const CHART_DRAG_ZOOM = token("chart-drag-zoom");
export const NOT_RECEIVED = token("chart-not-received");
export const NOT_APPLIED = token("chart-not-applied");
export const LAG_LINE = token("chart-lag");
export const LAG_FILL = token("chart-lag-fill");
export const HEAT_IDLE = token("heat-idle");
export const HEAT_BUSY = token("heat-busy");
export const HEAT_UNKNOWN = token("heat-unknown");

/** The channel accents, --series-0 … --series-9 (a lighter set in the dark theme). */
export const SERIES = [
  token("series-0"), // blue
  token("series-1"), // teal
  token("series-2"), // purple
  token("series-3"), // green
  token("series-4"), // magenta
  token("series-5"), // cyan
  token("series-6"), // brown
  token("series-7"), // slate
  token("series-8"), // olive
  token("series-9"), // indigo
] as const;
