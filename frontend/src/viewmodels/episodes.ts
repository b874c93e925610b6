// Lag episodes: the list per cluster (newest first: replica, started, lasted, peak, main cause,
// how it ended) and one episode's page (its window, its cause strip, each cause's evidence as
// tables, the other replicas during it, the parameter changes and the step that ended it).
import { formatClock, formatDateTime, formatDuration, formatParamValue, MISSING } from "../format/format";
import { causeDetail, causeTone, stripSegments, type CauseDetail, type CauseTone, type WhyStrip } from "./causes";
import { channelLabel } from "./colors";
import type { ChangeRef, EpisodeDetail, EpisodeSummary } from "./episodeTypes";
import { evidenceGroups, type EvidenceGroup } from "./evidence";
import { journalSearch, JOURNAL_DEFAULTS } from "./journalQuery";

/** "innodb_flush_log_at_trx_commit 1→2", with the instance when it is not the episode's replica. */
export function changeText(change: ChangeRef, replica?: string): string {
  const step = `${change.param} ${formatParamValue(change.old_value)}→${formatParamValue(change.new_value)}`;
  return replica !== undefined && change.instance !== replica ? `${step} on ${change.instance}` : step;
}

/** How an episode ended, in words: "after step: innodb_flush_log_at_trx_commit 1→2", "by itself", "ongoing". */
export function endedHowText(episode: Pick<EpisodeSummary, "ended_how" | "ended_by" | "replica">): string {
  switch (episode.ended_how) {
    case "ongoing":
      return "ongoing";
    case "by_itself":
      return "by itself";
    case "replica_removed":
      return "the replica was removed";
    case "after_step":
      return episode.ended_by ? `after step: ${changeText(episode.ended_by, episode.replica)}` : "after a step";
  }
}

/** How long it lasted; an ongoing episode counts to now (the answer's duration was at fetch time). */
export function lastedText(episode: Pick<EpisodeSummary, "started_at" | "ended_at" | "duration_s">, nowMs: number): string {
  if (episode.ended_at !== null) return formatDuration(episode.duration_s);
  const sinceS = Math.max(episode.duration_s, (nowMs - Date.parse(episode.started_at)) / 1000);
  return `${formatDuration(sinceS)} so far`;
}

function startedText(startedMs: number, nowMs: number): string {
  return nowMs - startedMs < 86_400_000 && new Date(nowMs).getDate() === new Date(startedMs).getDate()
    ? formatClock(startedMs)
    : formatDateTime(startedMs);
}

export interface EpisodeRow {
  id: number;
  href: string;
  replica: string;
  region: string;
  startedMs: number;
  startedText: string;
  lastedText: string;
  peakText: string;
  causeWords: string;
  causeTone: CauseTone;
  endedText: string;
  ongoing: boolean;
}

export function episodeHref(clusterId: number, episodeId: number): string {
  return `/clusters/${clusterId}/episodes/${episodeId}`;
}

export function episodeRow(episode: EpisodeSummary, nowMs: number): EpisodeRow {
  const startedMs = Date.parse(episode.started_at);
  return {
    id: episode.id,
    href: episodeHref(episode.cluster_id, episode.id),
    replica: channelLabel(episode.replica, episode.channel),
    region: episode.region,
    startedMs,
    startedText: startedText(startedMs, nowMs),
    lastedText: lastedText(episode, nowMs),
    peakText: episode.peak_lag_s === null ? MISSING : formatDuration(episode.peak_lag_s),
    causeWords: episode.main_cause?.words ?? "no cause named",
    causeTone: episode.main_cause ? causeTone(episode.main_cause.cause) : "muted",
    endedText: endedHowText(episode),
    ongoing: episode.ended_how === "ongoing",
  };
}

/** Newest first (by start; the answer says so too, but a list must not depend on it). */
export function buildEpisodeRows(episodes: readonly EpisodeSummary[], nowMs: number): EpisodeRow[] {
  return episodes
    .map((e) => episodeRow(e, nowMs))
    .sort((a, b) => b.startedMs - a.startedMs || b.id - a.id);
}

/** The journal around a step: an hour centred on it (the journal's own windows judge the step). */
export function journalHref(clusterId: number, atMs: number): string {
  const search = journalSearch({ ...JOURNAL_DEFAULTS, range: "custom", fromMs: atMs - 1_800_000, toMs: atMs + 1_800_000 });
  return `/clusters/${clusterId}/journal${search}`;
}

/** The chart's range over an episode: the episode with a margin either side so its start and
 * end read — as long as the episode itself (15 s to a minute), or a fifth of it if longer — so a
 * ten-second episode is not a sliver at the edge of a two-minute chart; an ongoing one runs to
 * now. */
export function episodeWindow(episode: Pick<EpisodeSummary, "started_at" | "ended_at">, nowMs: number): { startMs: number; endMs: number } {
  const from = Date.parse(episode.started_at);
  const to = episode.ended_at === null ? nowMs : Date.parse(episode.ended_at);
  const lasted = Math.max(0, to - from);
  const margin = Math.max(Math.min(60_000, Math.max(15_000, lasted)), lasted / 5);
  return { startMs: from - margin, endMs: episode.ended_at === null ? nowMs : Math.min(to + margin, nowMs) };
}

export interface EvidenceSection {
  key: string;
  cause: string;
  detail: CauseDetail;
  tone: CauseTone;
  groups: EvidenceGroup[];
}

export interface ChangeItem {
  id: number;
  text: string;
  atText: string;
  href: string;
  endedIt: boolean;
}

export interface OtherReplicaRow {
  label: string;
  peakText: string;
  laggedText: string;
  lagged: boolean;
}

export interface EpisodePageModel {
  id: number;
  clusterId: number;
  channelId: number;
  instanceId: number;
  title: string;
  row: EpisodeRow;
  peakAtText: string | null;
  startMs: number;
  endMs: number;
  /** The episode's own span (shaded on the chart). */
  episodeFromMs: number;
  episodeToMs: number;
  strip: WhyStrip;
  /** Each cause segment, strongest evidence first within its start order; the action included. */
  sections: EvidenceSection[];
  /** The actions named, each once, in segment order. */
  actions: string[];
  others: OtherReplicaRow[];
  changes: ChangeItem[];
  endedBy: ChangeItem | null;
}

function changeItem(change: ChangeRef, clusterId: number, replica: string, endedById: number | null): ChangeItem {
  const atMs = Date.parse(change.at);
  return {
    id: change.change_id,
    text: changeText(change, replica),
    atText: formatDateTime(atMs),
    href: journalHref(clusterId, atMs),
    endedIt: change.change_id === endedById,
  };
}

/** The page's model; `range` is the chart's drawn range when known (the lag answer's start and
 * end), so the cause strip lines up with the lag line; else the episode's window. */
export function buildEpisodePage(
  episode: EpisodeDetail,
  color: string,
  nowMs: number,
  range?: { startMs: number; endMs: number },
): EpisodePageModel {
  const { startMs, endMs } = range ?? episodeWindow(episode, nowMs);
  const row = episodeRow(episode, nowMs);
  const drawn = stripSegments(episode.causes, startMs, endMs, nowMs, `${episode.channel_id}:`);
  const sections = [...episode.causes]
    .sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))
    .map((s, i) => ({
      key: `${s.cause}:${s.started_at}:${i}`,
      cause: s.cause,
      detail: causeDetail(s, nowMs),
      tone: causeTone(s.cause),
      groups: evidenceGroups(s.evidence),
    }));
  const actions = [...new Set(sections.map((s) => s.detail.action.trim()).filter((a) => a !== ""))];
  const endedById = episode.ended_by?.change_id ?? null;
  const changes = [...episode.param_changes]
    .sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
    .map((c) => changeItem(c, episode.cluster_id, episode.replica, endedById));
  const endedBy = episode.ended_by ? changeItem(episode.ended_by, episode.cluster_id, episode.replica, endedById) : null;
  return {
    id: episode.id,
    clusterId: episode.cluster_id,
    channelId: episode.channel_id,
    instanceId: episode.instance_id,
    title: `${row.replica}: behind from ${formatDateTime(row.startedMs)}`,
    row,
    peakAtText: episode.peak_at ? formatDateTime(Date.parse(episode.peak_at)) : null,
    startMs,
    endMs,
    episodeFromMs: Date.parse(episode.started_at),
    episodeToMs: episode.ended_at === null ? nowMs : Date.parse(episode.ended_at),
    strip: { channelId: episode.channel_id, label: row.replica, color, ...drawn },
    sections,
    actions,
    others: episode.others.map((o) => ({
      label: channelLabel(o.replica, o.channel),
      peakText: o.peak_lag_s === null ? MISSING : formatDuration(o.peak_lag_s),
      laggedText: o.lagged ? "lagged too" : "did not lag",
      lagged: o.lagged,
    })),
    changes,
    endedBy,
  };
}
