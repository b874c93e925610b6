import { Link } from "react-router";
import type { JournalModel, JournalStep } from "../viewmodels/journal";
import { comparable, compareStepLink, explorerLink, FIGURES, pairText } from "../viewmodels/journal";
import { compareChannelsLink } from "../viewmodels/compareQuery";
import { ImpactBadge } from "./ImpactBadge";

/** Every step in time order; one row per replica, the step's own cells spanning them. */
export function JournalTable({ model }: { model: JournalModel }) {
  // Steps of one day show the clock alone (the date is in the summary and the tooltip).
  const sameDay = new Set(model.steps.map((s) => s.when.slice(0, -9))).size <= 1;
  return (
    <div className="table-scroll">
      <table className="journal" aria-label="Tuning journal">
        <thead>
          <tr>
            <th scope="col">step</th>
            <th scope="col">when</th>
            <th scope="col">what changed</th>
            <th scope="col">replica</th>
            {FIGURES.map((f) => (
              <th scope="col" key={f.key} className="num">
                {f.title}
                <span className="unit"> before → after</span>
              </th>
            ))}
            <th scope="col">verdict</th>
          </tr>
        </thead>
        {model.steps.map((step) => (
          <StepRows key={step.number} step={step} clusterId={model.clusterId} sameDay={sameDay} />
        ))}
      </table>
    </div>
  );
}

function StepRows({ step, clusterId, sameDay }: { step: JournalStep; clusterId: number; sameDay: boolean }) {
  const span = Math.max(1, step.cells.length);
  const [first, second] = step.cells;
  return (
    <tbody className="journal-step" data-step={step.number}>
      {(step.cells.length ? step.cells : [null]).map((cell, i) => (
        <tr key={cell?.channel.id ?? 0} data-step={step.number} data-replica={cell?.channel.label ?? ""}>
          {i === 0 ? (
            <>
              <th scope="rowgroup" rowSpan={span} className="step-no">
                {step.number}
              </th>
              <td rowSpan={span} className="step-when num">
                <time dateTime={new Date(step.atMs).toISOString()} title={step.when}>
                  {sameDay ? step.clock : step.when}
                </time>
              </td>
              <td rowSpan={span} className="step-what">
                <ul>
                  {step.what.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
                <div className="step-links">
                  <Link to={explorerLink(clusterId, step)} aria-label={`open step ${step.number} in the explorer`}>
                    explorer
                  </Link>
                  {first && second ? (
                    <Link
                      to={compareChannelsLink(clusterId, first.channel.id, second.channel.id, step.before.startMs, step.after.endMs)}
                      aria-label={`compare ${first.channel.label} with ${second.channel.label} around step ${step.number}`}
                    >
                      compare replicas
                    </Link>
                  ) : null}
                </div>
              </td>
            </>
          ) : null}
          {cell ? (
            <>
              <td className={`replica${cell.inScope ? "" : " control"}`}>
                <span className="swatch" style={{ background: cell.channel.color }} aria-hidden="true" /> {cell.channel.label}
                {cell.channel.region ? <span className="badge region">{cell.channel.region}</span> : null}
                {cell.inScope ? null : (
                  <span className="badge" title="the step did not touch this replica: if it moved too, the load did it">
                    control
                  </span>
                )}
                {comparable(step) ? (
                  <Link
                    className="compare-link"
                    to={compareStepLink(clusterId, step, cell.channel.id)}
                    aria-label={`compare ${cell.channel.label} before and after step ${step.number}`}
                  >
                    before/after
                  </Link>
                ) : null}
              </td>
              {FIGURES.map((f) => (
                <td key={f.key} className="num figure" data-figure={f.key}>
                  {pairText(cell.figures[f.key], f.unit)}
                </td>
              ))}
              <td className="verdict-cell">
                <ImpactBadge info={cell.verdictInfo} />
                <span className="reason">{cell.reason}</span>
                {cell.prediction ? (
                  <div className="prediction" data-testid="journal-prediction" data-channel={cell.prediction.instance}>
                    <span className="prediction-line">{cell.prediction.predicted}</span>{" "}
                    <span className="prediction-line">{cell.prediction.measured}</span>
                  </div>
                ) : null}
                {cell.durability ? (
                  <div className="prediction" data-testid="journal-durability" data-channel={cell.durability.instance}>
                    <span className="prediction-line">{cell.durability.predicted}</span>{" "}
                    <span className="prediction-line">{cell.durability.measured}</span>
                  </div>
                ) : null}
              </td>
            </>
          ) : (
            <td colSpan={FIGURES.length + 2} className="muted">
              no replica to judge
            </td>
          )}
        </tr>
      ))}
    </tbody>
  );
}
