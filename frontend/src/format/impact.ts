// Impact verdicts of a tuning step or a comparison, and the cause of a backlog, in words with an
// icon and a tone: colour is never the only signal.
import type { Schemas } from "../api/client";
import type { Tone } from "./verdict";

export type ImpactVerdict = Schemas["ImpactOut"]["verdict"];
export type BacklogCause = NonNullable<Schemas["CompareOut"]["cause"]>;

export interface ImpactInfo {
  label: string;
  icon: string;
  tone: Tone;
  explain: string;
}

const IMPACTS: Record<ImpactVerdict, ImpactInfo> = {
  improved: { label: "improved", icon: "✓", tone: "ok", explain: "the lag is lower after the step" },
  worse: { label: "worse", icon: "▲", tone: "bad", explain: "the lag is higher after the step" },
  no_clear_change: {
    label: "no clear change",
    icon: "≈",
    tone: "muted",
    explain: "the lag moved less than the noise of the two windows",
  },
  insufficient_data: {
    label: "insufficient data",
    icon: "?",
    tone: "muted",
    explain: "a window holds too few lag samples to judge",
  },
  not_measurable: {
    label: "not measurable",
    icon: "∅",
    tone: "muted",
    explain: "already catching up before the step and caught up after it: no backlog left to show a change in capacity",
  },
};

export function impactInfo(verdict: ImpactVerdict): ImpactInfo {
  return IMPACTS[verdict];
}

const CAUSES: Record<BacklogCause, ImpactInfo> = {
  not_received: {
    label: "receive side (network / relay log)",
    icon: "⇣",
    tone: "warn",
    explain: "the backlog is mostly transactions the replica has not received yet",
  },
  received_not_applied: {
    label: "apply side",
    icon: "⚙",
    tone: "warn",
    explain: "the backlog is mostly received transactions waiting for the applier",
  },
};

export function causeInfo(cause: BacklogCause): ImpactInfo {
  return CAUSES[cause];
}
