// Firing alerts now and the history of notifications, each linked to the explorer at that time.
import { Link } from "react-router";
import { useAlertEvents, useFiringAlerts } from "../../hooks/useAlertEvents";
import { formatDateTime } from "../../format/format";
import { eventRow, explorerLink, sortFiring } from "../../viewmodels/alerts";
import { Empty, Loading, ProblemView } from "../States";

export function FiringAlerts() {
  const firing = useFiringAlerts();
  if (firing.isPending) return <Loading what="firing alerts" />;
  if (firing.error) return <ProblemView error={firing.error} what="firing alerts" />;
  const rows = sortFiring(firing.data);
  if (rows.length === 0) return <Empty>Nothing firing.</Empty>;
  return (
    <div className="table-scroll">
      <table className="journal" aria-label="Firing alerts">
        <thead>
          <tr>
            <th>State</th>
            <th>Rule</th>
            <th>Severity</th>
            <th>Since</th>
            <th>Value</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.map((f) => (
            <tr key={`${f.rule_id}-${f.instance_id}-${f.channel_id ?? "i"}`}>
              <td>
                <span className={`badge alert-${f.phase}`}>{f.phase}</span>
              </td>
              <td>{f.rule_name}</td>
              <td>{f.severity}</td>
              <td>{f.since ? formatDateTime(Date.parse(f.since)) : "—"}</td>
              <td>{f.value ?? "unknown"}</td>
              <td>
                <Link to={explorerLink(f.cluster_id, f.since ?? new Date().toISOString(), null)}>explorer</Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AlertHistory() {
  const events = useAlertEvents();
  if (events.isPending) return <Loading what="alert history" />;
  if (events.error) return <ProblemView error={events.error} what="alert history" />;
  if (events.data.length === 0) return <Empty>No alert has fired yet.</Empty>;
  return (
    <div className="table-scroll">
      <table className="journal" aria-label="Alert history">
        <thead>
          <tr>
            <th>When</th>
            <th>What</th>
            <th>Alert</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {events.data.map(eventRow).map((e) => (
            <tr key={e.id}>
              <td className="step-when">{formatDateTime(Date.parse(e.at))}</td>
              <td>
                <span className={`badge alert-${e.kind}`}>{e.kind}</span>
                {e.muted ? <span className="muted small"> (held: {e.muted})</span> : null}
              </td>
              <td>{e.summary}</td>
              <td>
                <Link to={e.link}>explorer</Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
