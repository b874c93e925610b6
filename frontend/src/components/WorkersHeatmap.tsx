// A workers × time grid: one row per applier, one cell per bucket, shaded by its share.
import { formatClock, formatDateTime } from "../format/format";
import { shareColor, type HeatmapModel } from "../viewmodels/workers";

export function WorkersHeatmap({ model, share }: { model: HeatmapModel; share: string }) {
  const first = model.columns[0];
  const last = model.columns[model.columns.length - 1];
  return (
    <figure className="heatmap" aria-label={model.title}>
      {model.rows.map((row) => (
        <div className="heatmap-row" key={row.key}>
          <span className="heatmap-label">{row.label}</span>
          <span className="heatmap-cells">
            {row.cells.map((cell) => (
              <span
                key={cell.t}
                className="heatmap-cell"
                style={{ background: shareColor(cell.share) }}
                title={`${row.label} · ${formatDateTime(cell.t)}: ${
                  cell.share === null ? "no reading" : `${Math.round(cell.share * 100)} % ${share}`
                }`}
              />
            ))}
          </span>
        </div>
      ))}
      {first !== undefined && last !== undefined ? (
        <div className="heatmap-row heatmap-axis">
          <span className="heatmap-label" />
          <span className="heatmap-cells">
            <span>{formatClock(first)}</span>
            <span>{formatClock(last + model.bucketMs)}</span>
          </span>
        </div>
      ) : null}
    </figure>
  );
}
