// The API shapes of issue 19's episodes and causes (CONTRACT19.md section 4), written by hand
// until the generated schema has them: swapping each to `Schemas["..."]` is the one edit here.
// Server text (sentence, action, evidence strings) is data: rendered as text, never as HTML.

/** A cause label from the fixed list (CONTRACT19.md section 2); `words` is what an operator reads. */
export type CauseLabel =
  | "source_burst"
  | "network"
  | "relay_log_durability"
  | "durable_apply"
  | "serial_apply"
  | "ordering"
  | "large_transaction"
  | "ddl"
  | "blocked_by_session"
  | "no_usable_key"
  | "delayed_by_design"
  | "stopped"
  | "broken"
  | "unreachable"
  | "clock_skew"
  | "unexplained";

export interface CauseRef {
  cause: string;
  words: string;
}

export type EvidenceValue = string | number | boolean | null;

export interface CauseSegment {
  cause: string;
  words: string;
  started_at: string;
  ended_at: string | null;
  confidence: number;
  sentence: string;
  action: string;
  evidence: Record<string, EvidenceValue>;
  needs: string | null;
}

/** A channel's cause now (cluster status): a segment still open, `since` instead of started_at. */
export interface CurrentCause {
  cause: string;
  words: string;
  since: string;
  confidence: number;
  sentence: string;
  action: string;
  evidence: Record<string, EvidenceValue>;
  needs: string | null;
}

/** A parameter change (the step that ended an episode, or one inside it). */
export interface ChangeRef {
  change_id: number;
  instance: string;
  param: string;
  old_value: string | null;
  new_value: string | null;
  at: string;
}

export type EndedHow = "ongoing" | "by_itself" | "after_step" | "replica_removed";

export interface EpisodeSummary {
  id: number;
  cluster_id: number;
  channel_id: number;
  instance_id: number;
  replica: string;
  region: string;
  channel: string;
  started_at: string;
  ended_at: string | null;
  duration_s: number;
  peak_lag_s: number | null;
  peak_at: string | null;
  main_cause: CauseRef | null;
  ended_how: EndedHow;
  ended_by: ChangeRef | null;
}

export interface EpisodeOther {
  replica: string;
  channel: string;
  peak_lag_s: number | null;
  lagged: boolean;
}

export interface EpisodeDetail extends EpisodeSummary {
  causes: CauseSegment[];
  others: EpisodeOther[];
  param_changes: ChangeRef[];
}

export interface EpisodesOut {
  episodes: EpisodeSummary[];
}

export interface ChannelCauses {
  channel_id: number;
  instance_id: number;
  replica: string;
  channel: string;
  segments: CauseSegment[];
}

export interface CausesOut {
  channels: ChannelCauses[];
}

/** A status channel as issue 19 extends it (`causes`, `episode_id`); optional until the
 * generated ChannelStatusOut has them. */
export interface ChannelCauseFields {
  causes?: CurrentCause[] | null;
  episode_id?: number | null;
}
