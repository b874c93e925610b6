import type { ConnectionReport as Report } from "../viewmodels/connectionTest";

const GLYPH = { found: "✓", missing: "✕", excessive: "!" } as const;
const TONE = { found: "ok", missing: "bad", excessive: "warn" } as const;

/** The connection test's report; server texts (errors, names) shown as text. */
export function ConnectionReport({ report }: { report: Report }) {
  return (
    <div className={`connection-report ${report.ok ? "report-ok" : "report-problem"}`} role="status" aria-label="Connection test">
      <strong>{report.headline}</strong>
      <dl className="status-rows">
        {report.facts.map((f) => (
          <div key={f.term}>
            <dt>{f.term}</dt>
            <dd>{f.value}</dd>
          </div>
        ))}
      </dl>
      <ul className="privileges" aria-label="Privileges">
        {report.privileges.map((p) => (
          <li key={`${p.status}-${p.name}`} className={`tone-${TONE[p.status]}`}>
            <span aria-hidden="true">{GLYPH[p.status]} </span>
            {p.name} <span className="muted">({p.status === "excessive" ? "more than monitoring needs" : p.status})</span>
          </li>
        ))}
      </ul>
      {report.grant ? (
        <div>
          <p className="small">Run this on the server as an administrator, then test again:</p>
          <pre className="grant" aria-label="GRANT to run">
            {report.grant}
          </pre>
        </div>
      ) : null}
      {report.channels.length ? (
        <div className="small">
          Replication channels seen:
          <ul>
            {report.channels.map((c) => (
              <li key={c.name} className={c.problem ? "tone-bad" : undefined}>
                {c.name}: {c.state}
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <p className="small muted">No replication channel on this server (a source, or not replicating).</p>
      )}
      {report.problems.map((p) => (
        <p key={p.area} className="small tone-warn">
          {p.area}: {p.text}
        </p>
      ))}
    </div>
  );
}
