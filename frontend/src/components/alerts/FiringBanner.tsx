// The overview's strip of alerts firing now (pending ones are left to the Alerts page).
import { Link } from "react-router";
import { useFiringAlerts } from "../../hooks/useAlertEvents";
import { formatDateTime } from "../../format/format";
import { explorerLink, sortFiring } from "../../viewmodels/alerts";

export function FiringBanner() {
  const firing = useFiringAlerts();
  const rows = sortFiring(firing.data ?? []).filter((f) => f.phase === "firing");
  if (rows.length === 0) return null;
  return (
    <div className="card firing-banner" role="region" aria-label="Firing alerts">
      <strong>
        {rows.length} alert{rows.length === 1 ? "" : "s"} firing
      </strong>{" "}
      <Link to="/alerts">all alerts</Link>
      <ul>
        {rows.map((f) => (
          <li key={`${f.rule_id}-${f.instance_id}-${f.channel_id ?? "i"}`}>
            <span className={`badge alert-${f.severity === "critical" ? "firing" : "pending"}`}>{f.severity}</span>{" "}
            <Link to={explorerLink(f.cluster_id, f.since ?? new Date().toISOString(), null)}>{f.rule_name}</Link>
            {f.since ? <span className="muted small"> since {formatDateTime(Date.parse(f.since))}</span> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
