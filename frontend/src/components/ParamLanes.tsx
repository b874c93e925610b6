// Parameter lanes: one row per parameter that changed, its values as labelled segments, on the
// lag chart's time axis (same left offset and width as the plot area).
import { cursorLeftPct, type ParamLanesModel } from "../viewmodels/paramLanes";
import { RIGHT_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";
import { useChartCursor } from "./chartCursor";

export function ParamLanes({ model }: { model: ParamLanesModel }) {
  if (model.lanes.length === 0) {
    return <p className="muted param-lanes-empty">No tracked parameter changed in this range.</p>;
  }
  return (
    <div className="param-lanes" role="list" aria-label="Parameter changes">
      {model.lanes.map((lane) => (
        <div key={lane.key} className="param-lane" role="listitem" data-lane={lane.label} aria-label={lane.label}>
          <div className="param-lane-label">{lane.label}</div>
          <div className="param-lane-track" style={{ marginLeft: Y_AXIS_WIDTH, marginRight: RIGHT_MARGIN }}>
            {lane.segments.map((s, i) => (
              <div
                key={i}
                className={`param-lane-segment shade-${s.shade}`}
                style={{ left: `${s.leftPct}%`, width: `${s.widthPct}%` }}
                title={`${lane.label} = ${s.label}`}
              >
                {s.label}
              </div>
            ))}
            {lane.markers.map((m) => (
              <span
                key={m.id}
                className="param-lane-marker"
                style={{ left: `${m.leftPct}%` }}
                title={`${m.title} — ${m.detail}`}
                aria-label={`${m.title}, ${m.detail}`}
                role="img"
              >
                ◆
              </span>
            ))}
          </div>
        </div>
      ))}
      <LanesCursor model={model} />
    </div>
  );
}

/** The charts' hover line carried through the lanes (its own component: a mouse move re-renders it alone). */
function LanesCursor({ model }: { model: ParamLanesModel }) {
  const left = cursorLeftPct(model, useChartCursor("explorer"));
  if (left === null) return null;
  return (
    <div className="param-lanes-cursor-area" style={{ left: Y_AXIS_WIDTH, right: RIGHT_MARGIN }} aria-hidden="true">
      <div className="param-lanes-cursor" style={{ left: `${left}%` }} />
    </div>
  );
}
