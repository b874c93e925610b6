// Catching up in words: a backlog draining after what made it ended (or a tuning step). The
// finding's evidence names the cause that made the backlog and what limits the drain; the why
// strip and the overview put that cause beside "catching up", so the state never reads as
// "cause not identified". Pure; every string is rendered as text.
import { formatDuration } from "../format/format";
import type { EvidenceValue } from "./episodeTypes";

export const CATCHING_UP = "catching_up";

function text(value: EvidenceValue | undefined): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

/** "catching up · backlog made by fsync per event on the receiver" (a strip segment), with the
 * ETA when asked and known (the overview: "catching up, ETA 25 s · backlog made by …"). */
export function catchingUpWords(
  evidence: Readonly<Record<string, EvidenceValue>>,
  words: string,
  withEta = false,
): string {
  const eta = evidence.eta_s;
  const head = withEta && typeof eta === "number" && Number.isFinite(eta) ? `${words}, ETA ${formatDuration(eta)}` : words;
  const made = text(evidence.main_cause_words);
  if (made) return `${head} · backlog made by ${made}`;
  const step = text(evidence.step);
  return step ? `${head} after ${step}` : head;
}

/** A cause's words as drawn: catching up with the cause of its backlog, any other as it is. */
export function drawnWords(
  cause: string,
  words: string,
  evidence: Readonly<Record<string, EvidenceValue>>,
  withEta = false,
): string {
  return cause === CATCHING_UP ? catchingUpWords(evidence, words, withEta) : words;
}
