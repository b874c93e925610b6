// Lagscope's own trouble, under the header on every signed-in page ("No worker has polled for
// 42 s."). The live region is always there (empty and zero-height while all is well), so a
// screen reader hears the strip when it appears; the strip itself is there only when a part
// is not ok. Messages are text: the store's error can quote a driver's words.
import { useReadiness } from "../hooks/useReadiness";
import { buildHealthStrip } from "../viewmodels/healthStrip";

export function HealthStrip() {
  const readiness = useReadiness();
  const strip = buildHealthStrip(readiness.data, readiness.isError);
  return (
    <div className="health-strip-region" role="status" aria-live="polite" aria-label="Lagscope health">
      {strip ? (
        <div className={`health-strip health-strip--${strip.severity}`} data-testid="health-strip">
          <ul>
            {strip.items.map((item) => (
              <li key={item.component} className={`health-strip__item health-strip__item--${item.state}`}>
                <span className="health-strip__component">{item.component}</span>
                <span className="health-strip__state">{item.state}</span>
                <span className="health-strip__text">{item.text}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
