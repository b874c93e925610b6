// Under the lag chart: each break in a replica's line, with the reason in words.
import type { LagChartModel } from "../viewmodels/lagChart";

/** Where a lag line breaks, and why ("replica1: no lag — SQL thread stopped since 10:42:07"). */
export function GapList({ model }: { model: Pick<LagChartModel, "gaps"> }) {
  if (model.gaps.length === 0) return null;
  return (
    <ul className="gap-list small" aria-label="Gaps in the lag lines">
      {model.gaps.map((g, i) => (
        <li key={i} data-gap-channel={g.label}>
          <span className="swatch" style={{ background: g.color }} aria-hidden="true" /> {g.label}: no lag — {g.reason}
        </li>
      ))}
    </ul>
  );
}
