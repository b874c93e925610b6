import type { ParallelismView } from "../viewmodels/parallelism";
import { Loading, ProblemView } from "./States";

/** What the source's writes allow a parallel applier, predicted from its binlog: a headline, the
 * speed-up per worker count in both modes, and the cap the replica's cores put on it; then, for
 * replicas behind with strict flush settings, what relaxing them would give (with or without a
 * binlog sample: the two predictions are independent). Text only.
 * One per page (its heading's id): in the explorer's side panel, or a panel of the episode page
 * (`className="panel"`). */
export function ParallelismSection({
  view,
  pending,
  error,
  className,
}: {
  view: ParallelismView | null;
  pending: boolean;
  error: unknown;
  className?: string;
}) {
  return (
    <section
      className={className ? `side-parallel ${className}` : "side-parallel"}
      data-testid="parallelism"
      aria-labelledby="parallelism-title"
    >
      <h2 id="parallelism-title">Parallel apply (predicted)</h2>
      {error ? <ProblemView error={error} what="the parallel apply prediction" /> : null}
      {pending ? <Loading what="the parallel apply prediction" /> : null}
      {view?.kind === "none" ? <p className="muted small">{view.text}</p> : null}
      {view?.kind === "sampled" ? (
        <>
          {view.headline ? <p className="side-parallel-headline">{view.headline}</p> : null}
          <table className="side-parallel-table" aria-label="Predicted apply speed-up">
            <thead>
              <tr>
                <th scope="col">Workers</th>
                <th scope="col" className="num">
                  Conservative
                </th>
                <th scope="col" className="num">
                  Optimistic
                </th>
              </tr>
            </thead>
            <tbody>
              {view.rows.map((r) => (
                <tr key={r.workers}>
                  <th scope="row">{r.workers}</th>
                  <td className="num">{r.conservative}</td>
                  <td className="num">{r.optimistic}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted small side-parallel-modes">
            Conservative: what group-committed together on the source applies at once (MariaDB conservative, MySQL
            LOGICAL_CLOCK). Optimistic: MariaDB optimistic/aggressive, an upper bound that conflicts between neighbouring
            transactions bring down.
          </p>
          <ul className="side-parallel-facts small">
            <li>{view.groupSize}</li>
            <li>{view.sample}</li>
            {view.drains.map((d) => (
              <li key={d.channelId} data-testid="parallelism-drain" data-channel={d.label}>
                <strong>{d.label}</strong>: {d.text}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {view ? <p className="small tone-warn side-parallel-caveat">{view.caveat}</p> : null}
      {view && view.durability.length ? (
        <>
          <h3 className="sub">Relaxed flush (predicted)</h3>
          <ul className="side-parallel-facts small">
            {view.durability.map((d) => (
              <li key={d.channelId} data-testid="durability-now" data-channel={d.label}>
                <strong>{d.label}</strong>: {d.text}
              </li>
            ))}
          </ul>
          {view.durabilityCaveat ? <p className="small tone-warn side-parallel-caveat">{view.durabilityCaveat}</p> : null}
        </>
      ) : null}
    </section>
  );
}
