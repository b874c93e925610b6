import { Link } from "react-router";
import type { ClusterCard, TopologyNode } from "../viewmodels/overview";
import { Sparkline } from "./Sparkline";
import { ProblemView } from "./States";
import { VerdictBadge } from "./Verdict";

interface Props {
  card: ClusterCard;
  loading: boolean;
  error: unknown;
  sparkStart: number;
  sparkEnd: number;
  /** The fleet overview's state of the cluster (e.g. "behind"), as a data attribute. */
  state?: string;
  /** Alerts firing on the cluster. */
  firing?: number;
  /** How many servers it has (the card's height is fixed: the topology scrolls inside). */
  servers?: number;
}

export function ClusterCardView({ card, loading, error, sparkStart, sparkEnd, state, firing = 0, servers }: Props) {
  return (
    <article
      className={`card cluster-card tone-border-${firing > 0 ? "bad" : card.worst.tone}`}
      aria-labelledby={`cluster-${card.id}`}
      data-cluster-id={card.id}
      data-state={state}
      data-generated-at={card.generatedAt ?? ""}
    >
      <header className="card-head">
        <h2 id={`cluster-${card.id}`}>
          <Link to={`/clusters/${card.id}`}>{card.name}</Link>
        </h2>
        {!card.enabled ? <span className="badge">disabled</span> : null}
        {firing > 0 ? (
          <span className="badge alert-firing" title="Alerts firing on this cluster">
            <span aria-hidden="true">⚠ </span>
            {firing} alert{firing === 1 ? "" : "s"} firing
          </span>
        ) : null}
        {servers !== undefined ? (
          <span className="muted small">
            {servers} server{servers === 1 ? "" : "s"}
          </span>
        ) : null}
        <span className="muted card-summary">{loading ? "loading…" : card.summary}</span>
        {!loading && !card.noSamples ? <VerdictBadge verdict={card.worst} /> : null}
      </header>
      {error ? <ProblemView error={error} what="the status" /> : null}
      <ul className="topology" aria-label={`${card.name} topology`}>
        {card.roots.map((node) => (
          <TopologyItem key={node.id} node={node} sparkStart={sparkStart} sparkEnd={sparkEnd} />
        ))}
      </ul>
    </article>
  );
}

function TopologyItem({ node, sparkStart, sparkEnd }: { node: TopologyNode; sparkStart: number; sparkEnd: number }) {
  return (
    <li className="topo-node" data-instance={node.name}>
      <div className="topo-instance">
        <span className="topo-arrow" aria-hidden="true">
          {node.role === "source" ? "◉" : "↳"}
        </span>
        <strong>{node.name}</strong>
        <span className="muted">{node.role}</span>
        {node.region ? <span className="badge region">{node.region}</span> : null}
        {node.problem ? (
          <span className="node-problem tone-bad" role="status">
            <span aria-hidden="true">⚠ </span>
            {node.problem}
          </span>
        ) : null}
      </div>
      {node.channels.length ? (
        <table className="channel-rows">
          <tbody>
            {node.channels.map((row) => (
              <tr key={row.channelId} data-channel={row.label}>
                <td className="swatch-cell">
                  <span className="swatch" style={{ background: row.color }} aria-hidden="true" />
                </td>
                <td className="lag num" aria-label={`lag of ${row.label}`}>
                  {row.lagText}
                </td>
                <td className="muted lag-source">{row.lagSourceText}</td>
                <td>
                  <VerdictBadge verdict={row.verdict} />
                </td>
                <td>
                  <Sparkline
                    points={row.spark}
                    startMs={sparkStart}
                    endMs={sparkEnd}
                    color={row.color}
                    label={`${row.label}: lag over the last 15 minutes`}
                  />
                </td>
                <td className="channel-cause">
                  {row.cause ? (
                    <span
                      className={`cause-word tone-${row.cause.tone}`}
                      title={row.cause.title}
                      data-testid="channel-cause"
                      data-cause={row.cause.cause}
                    >
                      <span className="cause-why">why: </span>
                      {row.episodeHref ? (
                        <Link to={row.episodeHref} aria-label={`why ${row.label} is behind: ${row.cause.words}. ${row.cause.sentence}`}>
                          {row.cause.words}
                        </Link>
                      ) : (
                        row.cause.words
                      )}
                    </span>
                  ) : null}
                  {row.errant ? (
                    <span className="errant-word tone-bad" title={row.errant.title} data-testid="channel-errant">
                      <span aria-hidden="true">⚠ </span>
                      {row.errant.text}
                    </span>
                  ) : null}
                </td>
                <td className="disagreement">
                  {row.disagreement ? (
                    <span className="tone-warn" title="The lag sources disagree">
                      <span aria-hidden="true">≠ </span>
                      {row.disagreement}
                    </span>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {node.children.length ? (
        <ul className="topology">
          {node.children.map((child) => (
            <TopologyItem key={child.id} node={child} sparkStart={sparkStart} sparkEnd={sparkEnd} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}
