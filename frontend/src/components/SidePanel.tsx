import type { ReactNode } from "react";
import type { ChannelPanel } from "../viewmodels/sidePanel";
import { ProblemView } from "./States";
import { VerdictBadge } from "./Verdict";

/** The latest status per replica channel, then any further sections (children). Server error
 * messages are rendered as text. */
export function SidePanel({
  panels,
  statusError,
  children,
}: {
  panels: readonly ChannelPanel[];
  /** The status could not be loaded: said in place of the channels; the other sections stay. */
  statusError?: unknown;
  children?: ReactNode;
}) {
  return (
    <aside className="side-panel" aria-label="Replica status">
      <h2>Replicas now</h2>
      {statusError ? <ProblemView error={statusError} what="the status" /> : null}
      {panels.length === 0 && !statusError ? <p className="muted">No replica channel seen yet.</p> : null}
      {panels.map((p) => (
        <section key={p.channelId} className="side-channel" aria-label={`status of ${p.label}`} data-channel={p.label}>
          <h3>
            <span className="swatch" style={{ background: p.color }} aria-hidden="true" /> {p.label}{" "}
            <VerdictBadge verdict={p.verdict} />
          </h3>
          {p.disagreement ? (
            <p className="tone-warn small">
              <span aria-hidden="true">≠ </span>
              {p.disagreement}
            </p>
          ) : null}
          {p.cause ? (
            <p className={`side-cause tone-${p.cause.tone}`} data-testid="side-cause" data-cause={p.cause.cause}>
              <span className="muted">why: </span>
              <strong>{p.cause.words}</strong>
              {p.cause.sentence ? <span className="side-cause-sentence">{p.cause.sentence}</span> : null}
            </p>
          ) : null}
          {p.errant ? (
            <p className="tone-bad small" data-testid="side-errant">
              <span aria-hidden="true">⚠ </span>
              {p.errant}
            </p>
          ) : null}
          <dl className="status-rows">
            {p.rows.map((r) => (
              <div key={r.term} className={r.problem ? "problem" : undefined}>
                <dt>{r.term}</dt>
                <dd>
                  {r.problem ? <span aria-hidden="true">⚠ </span> : null}
                  {r.value}
                </dd>
              </div>
            ))}
          </dl>
          {p.errors.map((e) => (
            <div key={e.thread} className="server-error" role="note">
              <strong>Last {e.thread} error:</strong> <code>{e.text}</code>
            </div>
          ))}
        </section>
      ))}
      {children}
    </aside>
  );
}
