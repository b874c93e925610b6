// The API shapes of lag episodes and their causes (docs/api.md, "Lag episodes"), from the
// generated schema. Server text (sentence, action, evidence strings) is data: rendered as text, never
// as HTML.
import type { Schemas } from "../api/client";

/** A cause label from the fixed list (docs/causes.md, "The causes"); `words` is what an operator reads. */
export type CauseLabel = Schemas["CauseSegmentOut"]["cause"];
export type CauseRef = Schemas["CauseRefOut"];
export type CauseSegment = Schemas["CauseSegmentOut"];
export type EvidenceValue = CauseSegment["evidence"][string];
/** A channel's cause now (cluster status): a segment still open, `since` instead of started_at. */
export type CurrentCause = Schemas["CurrentCauseOut"];
/** A parameter change (the step that ended an episode, or one inside it). */
export type ChangeRef = Schemas["ParamChangeRefOut"];
export type EpisodeSummary = Schemas["EpisodeSummaryOut"];
export type EndedHow = EpisodeSummary["ended_how"];
export type EpisodeOther = Schemas["OtherChannelOut"];
export type EpisodeDetail = Schemas["EpisodeOut"];
export type EpisodesOut = Schemas["EpisodesOut"];
export type ChannelCauses = Schemas["ChannelCausesOut"];
export type CausesOut = Schemas["ClusterCausesOut"];
