import type { VerdictBandSegment } from "../viewmodels/decomposition";
import { RIGHT_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";

/** The verdict over time as a band of labelled segments (icon + words + colour). */
export function VerdictBand({ band, label }: { band: readonly VerdictBandSegment[]; label: string }) {
  return (
    <div className="verdict-band" style={{ marginLeft: Y_AXIS_WIDTH, marginRight: RIGHT_MARGIN }} aria-label={label} role="list">
      {band.length === 0 ? <span className="muted band-empty">no verdicts in this range</span> : null}
      {band.map((s, i) => (
        <div
          key={i}
          role="listitem"
          className={`band-segment tone-bg-${s.tone}`}
          style={{ left: `${s.leftPct}%`, width: `${s.widthPct}%` }}
          title={s.title}
        >
          <span aria-hidden="true">{s.icon}</span> {s.label}
        </div>
      ))}
    </div>
  );
}
