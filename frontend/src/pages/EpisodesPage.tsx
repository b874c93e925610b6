// A cluster's lag episodes, newest first: which replica, when it started, how long it lasted,
// its peak, its main cause in words and how it ended. Each row opens the episode's page.
import { useMemo } from "react";
import { Link, useParams } from "react-router";
import { useCluster } from "../hooks/useCluster";
import { useEpisodes } from "../hooks/useEpisodes";
import { useNow } from "../hooks/useNow";
import { buildEpisodeRows } from "../viewmodels/episodes";
import { ClusterNav } from "../components/ClusterNav";
import { Empty, Loading, ProblemView } from "../components/States";

/** The newest this many of the last EPISODES_DAYS days (the API's own default span). */
const EPISODES_LIMIT = 200;
const EPISODES_DAYS = 30;
const EPISODES_WINDOW = { kind: "last", spanMs: EPISODES_DAYS * 86_400_000 } as const;

export function EpisodesPage() {
  const clusterId = Number(useParams().clusterId);
  const cluster = useCluster(clusterId);
  const episodes = useEpisodes(clusterId, { window: EPISODES_WINDOW, limit: EPISODES_LIMIT });
  const nowMs = useNow(5000);
  const rows = useMemo(() => buildEpisodeRows(episodes.data?.episodes ?? [], nowMs), [episodes.data, nowMs]);
  const name = cluster.data?.name ?? `cluster ${clusterId}`;

  return (
    <section className="page episodes-page">
      <header className="page-head">
        <h1>
          <Link to="/" className="crumb">
            Overview
          </Link>{" "}
          / <Link to={`/clusters/${clusterId}`}>{name}</Link> / Lag episodes
        </h1>
        <ClusterNav clusterId={clusterId} />
      </header>
      <p className="muted small">
        An episode runs from the moment a replica falls behind until it has been caught up for a while; its causes are
        named as they happen. The last {EPISODES_DAYS} days, newest first
        {rows.length >= EPISODES_LIMIT ? ` (the newest ${EPISODES_LIMIT} shown)` : ""}.
      </p>
      {episodes.error ? <ProblemView error={episodes.error} what="the episodes" /> : null}
      {episodes.isPending ? <Loading what="the episodes" /> : null}
      {!episodes.isPending && !episodes.error && rows.length === 0 ? (
        <Empty>No lag episodes in the last {EPISODES_DAYS} days: no replica of this cluster has fallen behind.</Empty>
      ) : null}
      {rows.length ? (
        <table className="data-table episodes-table" aria-label="Lag episodes" data-testid="episodes-table">
          <thead>
            <tr>
              <th scope="col">Replica</th>
              <th scope="col">Started</th>
              <th scope="col">Lasted</th>
              <th scope="col">Peak</th>
              <th scope="col">Main cause</th>
              <th scope="col">How it ended</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-testid="episode-row" data-episode-id={r.id} className={r.ongoing ? "episode-ongoing" : undefined}>
                <td>
                  {r.replica}
                  {r.region ? <span className="badge region">{r.region}</span> : null}
                </td>
                <td>
                  <Link to={r.href} aria-label={`episode of ${r.replica} started ${r.startedText}`}>
                    {r.startedText}
                  </Link>
                </td>
                <td className="num">{r.lastedText}</td>
                <td className="num">{r.peakText}</td>
                <td>
                  <span className={`cause-word tone-${r.causeTone}`} data-testid="episode-cause">
                    {r.causeWords}
                  </span>
                </td>
                <td data-testid="episode-ended">{r.ongoing ? <strong className="tone-warn">ongoing</strong> : r.endedText}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
