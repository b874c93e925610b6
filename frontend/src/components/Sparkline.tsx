import type { GapPoint } from "../viewmodels/series";

interface Props {
  points: readonly GapPoint[];
  startMs: number;
  endMs: number;
  color: string;
  label: string;
  width?: number;
  height?: number;
}

/** A tiny lag line; a null point breaks it (a gap, never a drop to 0). Plain SVG: dozens of
 * these on one page must cost nothing. The scale is this line's own, from 0 to its max. */
export function Sparkline({ points, startMs, endMs, color, label, width = 120, height = 28 }: Props) {
  const max = Math.max(1, ...points.map((p) => p.value ?? 0));
  const span = Math.max(1, endMs - startMs);
  const segments: string[] = [];
  let current: string[] = [];
  for (const p of points) {
    if (p.value === null) {
      if (current.length) segments.push(current.join(" "));
      current = [];
      continue;
    }
    const x = ((p.t - startMs) / span) * width;
    const y = height - 2 - (p.value / max) * (height - 4);
    current.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  }
  if (current.length) segments.push(current.join(" "));
  return (
    <svg className="sparkline" width={width} height={height} role="img" aria-label={label}>
      <line x1={0} x2={width} y1={height - 2} y2={height - 2} className="spark-base" />
      {segments.map((s, i) =>
        s.includes(" ") ? (
          <polyline key={i} points={s} fill="none" stroke={color} strokeWidth={1.5} />
        ) : (
          <circle key={i} cx={s.split(",")[0]} cy={s.split(",")[1]} r={1.5} fill={color} />
        ),
      )}
    </svg>
  );
}
