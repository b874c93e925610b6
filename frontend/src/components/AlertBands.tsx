// The firing alerts drawn as bands on the lag chart, listed in words under it (severity and rule
// as text, so the band's colour is never the only telling).
import type { AlertBandsModel } from "../viewmodels/alertBands";

export function AlertBandList({ model }: { model: AlertBandsModel }) {
  if (model.bands.length === 0 && !model.note) return null;
  return (
    <div className="alert-bands small">
      {model.bands.length ? (
        <ul aria-label="Alerts firing in this range">
          {model.bands.map((b) => (
            <li key={b.key} data-severity={b.severity} data-open={b.resolvedMs === null}>
              <span className="swatch alert-swatch" style={{ background: b.color }} aria-hidden="true" /> {b.label}
            </li>
          ))}
        </ul>
      ) : null}
      {model.note ? <p className="muted">{model.note}</p> : null}
    </div>
  );
}
