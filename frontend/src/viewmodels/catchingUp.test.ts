import { describe, expect, it } from "vitest";
import { iso, segment, T0 } from "../test/episodesData";
import { currentCauseView, stripSegments } from "./causes";
import { catchingUpWords, drawnWords } from "./catchingUp";

const EVIDENCE = {
  since: "2026-11-28T04:44:00Z",
  after: "step",
  step: "sync_relay_log 1→0",
  main_cause: "relay_log_durability",
  main_cause_words: "fsync per event on the receiver",
  limit: null,
  eta_s: 25,
  drain_s_per_s: 1.4,
};

describe("catching up in words", () => {
  it("puts the cause that made the backlog beside the state, and the ETA when asked", () => {
    expect(catchingUpWords(EVIDENCE, "catching up")).toBe("catching up · backlog made by fsync per event on the receiver");
    expect(catchingUpWords(EVIDENCE, "catching up", true)).toBe(
      "catching up, ETA 25 s · backlog made by fsync per event on the receiver",
    );
  });

  it("says the step when the backlog's cause was not identified", () => {
    expect(catchingUpWords({ ...EVIDENCE, main_cause_words: null }, "catching up")).toBe("catching up after sync_relay_log 1→0");
    expect(catchingUpWords({}, "catching up", true)).toBe("catching up");
  });

  it("leaves every other cause's words as they are", () => {
    expect(drawnWords("network", "the link to the source", EVIDENCE)).toBe("the link to the source");
  });

  it("is what the why strip and the overview show", () => {
    const drain = segment({
      cause: "catching_up",
      words: "catching up",
      evidence: EVIDENCE,
      started_at: iso(T0 + 60_000),
      ended_at: null,
    });
    const { segments } = stripSegments([drain], T0, T0 + 600_000, T0 + 600_000);
    expect(segments[0]?.words).toBe("catching up · backlog made by fsync per event on the receiver");
    expect(segments[0]?.tone).toBe("muted");
    const view = currentCauseView([
      {
        cause: "catching_up",
        words: "catching up",
        since: iso(T0),
        confidence: 0.8,
        sentence: "replica1 is catching up since 04:44:00 UTC.",
        action: "Nothing to do while it drains.",
        evidence: EVIDENCE,
        needs: null,
      },
    ]);
    expect(view?.words).toBe("catching up, ETA 25 s · backlog made by fsync per event on the receiver");
    expect(view?.cause).toBe("catching_up");
  });
});
