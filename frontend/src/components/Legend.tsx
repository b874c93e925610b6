// What each line or area of a chart is: a short stroke (dashed as drawn) or a colour swatch,
// and its label. The one legend of the explorer's charts.
import type { ReactNode } from "react";

export interface LegendItem {
  key: string;
  label: string;
  color: string;
  /** The line's SVG dash pattern (undefined: solid). */
  dash?: string | undefined;
}

export function Legend({
  items,
  mark = "line",
  width = 22,
  label,
  children,
}: {
  items: readonly LegendItem[];
  /** "line": a stroke like the chart's; "swatch": a filled square, for areas. */
  mark?: "line" | "swatch";
  /** The stroke's length in px. */
  width?: number;
  label?: string;
  /** Said after the items (e.g. what a shaded band means). */
  children?: ReactNode;
}) {
  return (
    <div className="legend" aria-label={label}>
      {items.map((item) => (
        <span key={item.key}>
          {mark === "line" ? (
            <svg width={width} height="8" aria-hidden="true">
              <line x1="0" x2={width} y1="4" y2="4" stroke={item.color} strokeWidth="2" strokeDasharray={item.dash} />
            </svg>
          ) : (
            <span className="swatch" style={{ background: item.color }} aria-hidden="true" />
          )}{" "}
          {item.label}
        </span>
      ))}
      {children}
    </div>
  );
}
