// Settings → audit (admins): who changed what, when and from where, newest first.
import { useState } from "react";
import type { Schemas } from "../../api/client";
import { Loading, ProblemView } from "../../components/States";
import { formatDateTime } from "../../format/format";
import { useAudit, type AuditFilter } from "../../hooks/useAudit";
import { AUDIT_ACTIONS, AUDIT_KINDS, auditRows, kindWords } from "../../viewmodels/audit";

export function AuditSettings({ me }: { me: Schemas["MeOut"] }) {
  const [actor, setActor] = useState("");
  const [kind, setKind] = useState("");
  const [action, setAction] = useState<AuditFilter["action"] | "">("");
  // Older pages: the before_id of each page shown after the first.
  const [pages, setPages] = useState<number[]>([]);
  const filter: AuditFilter = {
    ...(actor.trim() ? { actor: actor.trim() } : {}),
    ...(kind ? { kind } : {}),
    ...(action ? { action } : {}),
    ...(pages.length ? { before_id: pages[pages.length - 1] } : {}),
  };
  const audit = useAudit(filter, me.role === "admin");

  if (me.role !== "admin") return <p className="muted">Only admins read the audit trail.</p>;

  const rows = audit.data ? auditRows(audit.data.events, (iso) => formatDateTime(Date.parse(iso))) : [];
  const next = audit.data?.next_before_id ?? null;
  const refilter = (set: () => void) => {
    set();
    setPages([]);
  };

  return (
    <div className="settings-section">
      <form className="card inline-form" aria-label="Filter the audit trail" onSubmit={(e) => e.preventDefault()}>
        <label>
          Who
          <input value={actor} onChange={(e) => refilter(() => setActor(e.target.value))} placeholder="any" autoComplete="off" />
        </label>
        <label>
          What
          <select value={kind} onChange={(e) => refilter(() => setKind(e.target.value))}>
            <option value="">anything</option>
            {AUDIT_KINDS.map((k) => (
              <option key={k} value={k}>
                {kindWords(k)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Change
          <select value={action} onChange={(e) => refilter(() => setAction(e.target.value as AuditFilter["action"] | ""))}>
            <option value="">any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
      </form>
      {audit.isPending ? <Loading what="the audit trail" /> : null}
      {audit.error ? <ProblemView error={audit.error} what="the audit trail" /> : null}
      {audit.data && rows.length === 0 ? <p className="muted">No change recorded{pages.length ? " before these" : ""}.</p> : null}
      {rows.length ? (
        <table className="data-table" aria-label="Audit trail">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">From</th>
              <th scope="col">Change</th>
              <th scope="col">What changed</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-audit={r.id}>
                <td>{r.at}</td>
                <td>{r.who}</td>
                <td title={r.via}>{r.from}</td>
                <td>{r.what}</td>
                <td>
                  {r.changes.length ? (
                    r.changes.map((line) => <div key={line}>{line}</div>)
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <div className="row-actions">
        {pages.length ? (
          <button type="button" className="link" onClick={() => setPages(pages.slice(0, -1))}>
            Newer
          </button>
        ) : null}
        {next !== null ? (
          <button type="button" className="link" onClick={() => setPages([...pages, next])}>
            Older
          </button>
        ) : null}
      </div>
    </div>
  );
}
