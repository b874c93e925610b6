// One lag episode as a report to share (a ticket, a post-mortem): its figures, what to do, each
// cause with its evidence, the other replicas and the parameter changes during it. Built from the
// episode the page already has; the times in UTC with the date, since the reader may be anywhere
// and read it weeks later. Every text from the servers stays plain text here: the renderers
// (markdown.ts, html.ts) escape it for their format.
import { formatDuration, MISSING } from "../format/format";
import { confidenceText } from "../viewmodels/causes";
import { channelLabel } from "../viewmodels/colors";
import type { EpisodeDetail } from "../viewmodels/episodeTypes";
import { changeText, endedHowText, lastedText } from "../viewmodels/episodes";
import { evidenceGroups } from "../viewmodels/evidence";

export interface ReportFact {
  label: string;
  value: string;
}

export interface ReportEvidence {
  title: string;
  rows: { label: string; text: string; code: boolean }[];
}

export interface ReportCause {
  words: string;
  when: string;
  confidence: string;
  sentence: string;
  action: string;
  /** What the evidence lacks ("needs PROCESS"), when something. */
  needs: string | null;
  evidence: ReportEvidence[];
}

export interface EpisodeReport {
  title: string;
  /** "cluster lab · episode 12". */
  context: string;
  /** The episode page, when a web address. */
  pageUrl: string | null;
  facts: ReportFact[];
  mainCause: string;
  actions: string[];
  causes: ReportCause[];
  others: { replica: string; peak: string; during: string }[];
  changes: { at: string; text: string; endedIt: boolean }[];
  /** The chart's picture beside the report (its PNG export's file name), when known. */
  chartFile: string | null;
  chartAlt: string;
  madeAt: string;
}

export interface EpisodeReportInput {
  episode: EpisodeDetail;
  clusterName: string;
  nowMs: number;
  pageUrl: string;
  chartFile?: string | null;
}

/** The page's address as a link, when it is a web address (never a javascript: one). */
export function webAddress(url: string): string | null {
  return /^https?:\/\/[^\s<>"']+$/i.test(url) ? url : null;
}

/** 2026-12-06 03:12:05 UTC. */
export function utcText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

function utcSpan(fromMs: number, toMs: number | null, nowMs: number): string {
  if (toMs === null) return `since ${utcText(fromMs)} (${formatDuration(Math.max(0, nowMs - fromMs) / 1000)} so far)`;
  return `${utcText(fromMs)} – ${utcText(toMs)} (${formatDuration(Math.max(0, toMs - fromMs) / 1000)})`;
}

export function buildEpisodeReport({ episode, clusterName, nowMs, pageUrl, chartFile = null }: EpisodeReportInput): EpisodeReport {
  const replica = channelLabel(episode.replica, episode.channel);
  const startedMs = Date.parse(episode.started_at);
  const endedMs = episode.ended_at === null ? null : Date.parse(episode.ended_at);
  const mainCause = episode.main_cause?.words ?? "no cause named";
  const peak =
    episode.peak_lag_s === null
      ? MISSING
      : `${formatDuration(episode.peak_lag_s)}${episode.peak_at ? ` at ${utcText(Date.parse(episode.peak_at))}` : ""}`;
  const endedById = episode.ended_by?.change_id ?? null;
  const causes = [...episode.causes]
    .sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))
    .map((s) => ({
      words: s.words,
      when: utcSpan(Date.parse(s.started_at), s.ended_at === null ? null : Date.parse(s.ended_at), nowMs),
      confidence: confidenceText(s.confidence),
      sentence: s.sentence,
      action: s.action,
      needs: s.needs,
      evidence: evidenceGroups(s.evidence).map((g) => ({
        title: g.title,
        rows: g.rows.map((r) => ({ label: r.label, text: r.text, code: r.code })),
      })),
    }));
  return {
    title: `Lag episode: ${replica} behind from ${utcText(startedMs)}`,
    context: `cluster ${clusterName} · episode ${episode.id}`,
    pageUrl: webAddress(pageUrl),
    facts: [
      { label: "Cluster", value: clusterName },
      { label: "Replica", value: episode.region ? `${replica} (${episode.region})` : replica },
      { label: "Started", value: utcText(startedMs) },
      { label: "Ended", value: endedMs === null ? "ongoing" : utcText(endedMs) },
      { label: "Lasted", value: lastedText(episode, nowMs) },
      { label: "Peak lag", value: peak },
      { label: "Main cause", value: mainCause },
      { label: "How it ended", value: endedHowText(episode) },
    ],
    mainCause,
    actions: [...new Set(causes.map((c) => c.action.trim()).filter((a) => a !== ""))],
    causes,
    others: episode.others.map((o) => ({
      replica: channelLabel(o.replica, o.channel),
      peak: o.peak_lag_s === null ? MISSING : formatDuration(o.peak_lag_s),
      during: o.lagged ? "lagged too" : "did not lag",
    })),
    changes: [...episode.param_changes]
      .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
      .map((c) => ({ at: utcText(Date.parse(c.at)), text: changeText(c, episode.replica), endedIt: c.change_id === endedById })),
    chartFile,
    chartAlt: `Lag of ${replica} over the episode, with its causes`,
    madeAt: utcText(nowMs),
  };
}
