// A cause's evidence as small tables: the blocking session, the transaction, the table, the rest.
// Statements and names come from monitored servers: rendered as text, never as HTML.
import { MISSING } from "../format/format";
import type { EvidenceGroup } from "../viewmodels/evidence";

export function EvidenceTables({ groups }: { groups: readonly EvidenceGroup[] }) {
  if (groups.length === 0) return <p className="muted small">No evidence recorded for this cause.</p>;
  return (
    <div className="evidence-tables">
      {groups.map((g) => (
        <table key={g.kind} className="evidence-table" data-testid={`evidence-${g.kind}`}>
          <caption>{g.title}</caption>
          <tbody>
            {g.rows.map((r) => (
              <tr key={r.key} data-key={r.key}>
                <th scope="row">{r.label}</th>
                <td>{r.code && r.text !== MISSING ? <code className="evidence-code">{r.text}</code> : r.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </div>
  );
}
