// One lag episode: the lag over it with its cause segments, what to do, what more apply workers
// would allow (the prediction from the source's binlog, with this channel's drain time) and what
// relaxing its flush settings would give, each cause's evidence (the blocking session, the
// transaction, the table), the other replicas during it, and the parameter change that ended it
// with a link to the journal.
import { useRef, type RefObject } from "react";
import { Link, useParams } from "react-router";
import { useEpisodePageData } from "../hooks/useEpisodePageData";
import type { EpisodeDetail } from "../viewmodels/episodeTypes";
import { episodePageModel, type EpisodePageView } from "../viewmodels/episodePage";
import { ClusterNav } from "../components/ClusterNav";
import { EvidenceTables } from "../components/EvidenceTables";
import { LagChart } from "../components/LagChart";
import { Legend } from "../components/Legend";
import { ParallelismSection } from "../components/ParallelismSection";
import { Loading, ProblemView } from "../components/States";
import { CauseDetailView, WhyStrips } from "../components/WhyStrips";
import { downloadBlob, downloadText } from "../components/download";
import { ExportButton } from "../components/ExportButton";
import { buildEpisodeReport } from "../export/episodeReport";
import { exportFileName } from "../export/fileName";
import { episodeHtml } from "../export/html";
import { episodeMarkdown } from "../export/markdown";
import { elementPngBlob, elementPngDataUrl } from "../export/png";

export function EpisodePage() {
  const params = useParams();
  const clusterId = Number(params.clusterId);
  const episodeId = Number(params.episodeId);
  const pageRef = useRef<HTMLElement>(null);
  const chartRef = useRef<HTMLElement>(null);
  const { episode, data, lag, parallelism } = useEpisodePageData(clusterId, episodeId);
  if (!Number.isInteger(episodeId) || episodeId < 1) return <ProblemView error={new Error("no such episode")} />;
  if (episode.isPending) return <Loading what="the episode" />;
  if (episode.error || !data) return <ProblemView error={episode.error ?? new Error("no such episode")} what="the episode" />;

  const view = episodePageModel(data);
  const { page: model, clusterName, chart, markers } = view;
  const row = model.row;
  const refs: ExportSource = { view, episode: data.episode, page: pageRef, chart: chartRef };

  return (
    <section className="page episode-page" data-testid="episode-page" data-episode-id={model.id} ref={pageRef}>
      <header className="page-head">
        <h1>
          <Link to="/" className="crumb">
            Overview
          </Link>{" "}
          / <Link to={`/clusters/${clusterId}`}>{clusterName}</Link> /{" "}
          <Link to={`/clusters/${clusterId}/episodes`}>Lag episodes</Link> / {model.title}
        </h1>
        <ClusterNav clusterId={clusterId} />
      </header>
      <div className="export-actions" role="group" aria-label="Export the episode" data-export="skip">
        <ExportButton label="Download PNG" make={() => exportEpisode("png", refs)} testId="export-episode-png" />
        <ExportButton label="Markdown report" make={() => exportEpisode("md", refs)} testId="export-episode-md" />
        <ExportButton label="HTML report" make={() => exportEpisode("html", refs)} testId="export-episode-html" />
      </div>
      <dl className="episode-facts" aria-label="The episode">
        <div>
          <dt>Replica</dt>
          <dd>
            {row.replica}
            {row.region ? <span className="badge region">{row.region}</span> : null}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{row.startedText}</dd>
        </div>
        <div>
          <dt>Lasted</dt>
          <dd>{row.lastedText}</dd>
        </div>
        <div>
          <dt>Peak</dt>
          <dd>
            {row.peakText}
            {model.peakAtText ? <span className="muted small"> at {model.peakAtText}</span> : null}
          </dd>
        </div>
        <div>
          <dt>Main cause</dt>
          <dd className={`cause-word tone-${row.causeTone}`} data-testid="episode-main-cause">
            {row.causeWords}
          </dd>
        </div>
        <div>
          <dt>How it ended</dt>
          <dd data-testid="episode-ended">
            {model.endedBy ? (
              <>
                after step: {model.endedBy.text}{" "}
                <Link to={model.endedBy.href} data-testid="episode-journal-link">
                  see it in the journal
                </Link>
              </>
            ) : row.ongoing ? (
              <strong className="tone-warn">ongoing</strong>
            ) : (
              row.endedText
            )}
          </dd>
        </div>
      </dl>

      <section className="panel" aria-labelledby="episode-lag-title" ref={chartRef}>
        <div className="panel-head">
          <h2 id="episode-lag-title">How far behind, and why</h2>
        </div>
        <Legend items={chart.lines} label="Lines" />
        {lag?.error ? <ProblemView error={lag.error} what="the lag" /> : null}
        {!lag || lag.isPending ? <Loading what="the lag" /> : null}
        <LagChart model={chart} markers={markers} annotations={[]} height={240} />
        <WhyStrips strips={[model.strip]} emptyText="no cause named during this episode" />
      </section>

      <section className="panel" aria-labelledby="episode-action-title">
        <h2 id="episode-action-title">What to do</h2>
        {model.actions.length ? (
          <ul className="episode-actions" data-testid="episode-actions">
            {model.actions.map((a) => (
              <li key={a}>{a}</li>
            ))}
          </ul>
        ) : (
          <p className="muted">No action named for this episode&apos;s causes.</p>
        )}
      </section>

      <ParallelismSection view={view.parallelism} pending={parallelism.isPending} error={parallelism.error} className="panel" />

      <section className="panel" aria-labelledby="episode-evidence-title">
        <h2 id="episode-evidence-title">The evidence</h2>
        {model.sections.length === 0 ? <p className="muted">No cause was named during this episode.</p> : null}
        {model.sections.map((s) => (
          <article key={s.key} className={`evidence-section tone-border-${s.tone}`} data-testid="evidence-section" data-cause={s.cause}>
            <CauseDetailView detail={s.detail} withEvidence={false} />
            <EvidenceTables groups={s.groups} />
          </article>
        ))}
      </section>

      <section className="panel" aria-labelledby="episode-others-title">
        <h2 id="episode-others-title">The other replicas during it</h2>
        {model.others.length === 0 ? (
          <p className="muted">No other replica in this cluster.</p>
        ) : (
          <table className="data-table" aria-labelledby="episode-others-title" data-testid="episode-others">
            <thead>
              <tr>
                <th scope="col">Replica</th>
                <th scope="col">Peak</th>
                <th scope="col">During this episode</th>
              </tr>
            </thead>
            <tbody>
              {model.others.map((o) => (
                <tr key={o.label}>
                  <td>{o.label}</td>
                  <td className="num">{o.peakText}</td>
                  <td className={o.lagged ? "tone-warn" : "tone-ok"}>{o.laggedText}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="panel" aria-labelledby="episode-changes-title">
        <h2 id="episode-changes-title">Parameter changes during it</h2>
        {model.changes.length === 0 ? (
          <p className="muted">No tracked parameter changed during this episode.</p>
        ) : (
          <ul className="episode-changes" data-testid="episode-changes">
            {model.changes.map((c) => (
              <li key={c.id}>
                <span className="muted">{c.atText}</span> {c.text}
                {c.endedIt ? <strong> — ended the episode</strong> : null}{" "}
                <Link to={c.href}>journal</Link>
              </li>
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}

interface ExportSource {
  view: EpisodePageView;
  episode: EpisodeDetail;
  page: RefObject<HTMLElement | null>;
  chart: RefObject<HTMLElement | null>;
}

/** The exports: the page as a picture, and the episode as a report (Markdown, or HTML with the
 * lag chart embedded), each named after the replica and the episode's own span in UTC. */
async function exportEpisode(kind: "png" | "md" | "html", { view, episode, page, chart }: ExportSource): Promise<void> {
  const fileName = (ext: "png" | "md" | "html") => exportFileName({ ...view.exportName, ext });
  if (kind === "png") {
    if (!page.current) throw new Error("the page is not shown");
    downloadBlob(fileName("png"), await elementPngBlob(page.current));
    return;
  }
  const report = buildEpisodeReport({
    episode,
    clusterName: view.clusterName,
    nowMs: Date.now(),
    pageUrl: document.location.href,
    chartFile: fileName("png"),
  });
  if (kind === "md") {
    downloadText(fileName("md"), episodeMarkdown(report), "text/markdown;charset=utf-8");
    return;
  }
  // The report still goes out without its chart if the picture cannot be made.
  const picture = chart.current ? await elementPngDataUrl(chart.current).catch(() => null) : null;
  downloadText(fileName("html"), episodeHtml(report, picture), "text/html;charset=utf-8");
}
