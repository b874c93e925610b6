import { describe, expect, it } from "vitest";
import { formatDateTime } from "../format/format";
import { blockedSegment, change, episodeDetail, episodeSummary, iso, segment, T0 } from "../test/episodesData";
import { parseJournalQuery } from "./journalQuery";
import {
  buildEpisodePage,
  buildEpisodeRows,
  endedHowText,
  episodeWindow,
  journalHref,
  lastedText,
} from "./episodes";

describe("endedHowText", () => {
  it("names the step that ended it", () => {
    expect(endedHowText(episodeSummary({ ended_how: "after_step", ended_by: change() }))).toBe(
      "after step: innodb_flush_log_at_trx_commit 1→2",
    );
  });

  it("names the instance when the step was on another server", () => {
    expect(endedHowText(episodeSummary({ ended_how: "after_step", ended_by: change({ instance: "source1", param: "sync_binlog" }) }))).toBe(
      "after step: sync_binlog 1→2 on source1",
    );
  });

  it("says by itself, ongoing, removed, and a step it cannot name", () => {
    expect(endedHowText(episodeSummary({ ended_how: "by_itself" }))).toBe("by itself");
    expect(endedHowText(episodeSummary({ ended_how: "ongoing", ended_at: null }))).toBe("ongoing");
    expect(endedHowText(episodeSummary({ ended_how: "replica_removed" }))).toBe("the replica was removed");
    expect(endedHowText(episodeSummary({ ended_how: "after_step", ended_by: null }))).toBe("after a step");
  });

  it("says an unset old value in words", () => {
    expect(endedHowText(episodeSummary({ ended_how: "after_step", ended_by: change({ old_value: null }) }))).toBe(
      "after step: innodb_flush_log_at_trx_commit unset→2",
    );
  });
});

describe("lastedText", () => {
  it("is the duration of an ended episode", () => {
    expect(lastedText(episodeSummary(), T0 + 3_600_000)).toBe("5 m");
  });

  it("counts an ongoing episode to now, not to the fetch", () => {
    const ongoing = episodeSummary({ ended_at: null, ended_how: "ongoing", duration_s: 60 });
    expect(lastedText(ongoing, T0 + 125_000)).toBe("2 m 5 s so far");
    // The clock behind the answer (a fetch a moment later): never less than the API said.
    expect(lastedText(ongoing, T0 + 10_000)).toBe("1 m so far");
  });
});

describe("buildEpisodeRows", () => {
  it("lists newest first with replica, started, lasted, peak, main cause and how it ended", () => {
    const rows = buildEpisodeRows(
      [
        episodeSummary({ id: 1 }),
        episodeSummary({
          id: 2,
          replica: "replica2",
          channel: "ch2",
          started_at: iso(T0 + 900_000),
          ended_at: null,
          ended_how: "ongoing",
          duration_s: 30,
          peak_lag_s: null,
          main_cause: { cause: "blocked_by_session", words: "blocked by a session on the replica" },
        }),
      ],
      T0 + 960_000,
    );
    expect(rows.map((r) => r.id)).toEqual([2, 1]);
    const [ongoing, done] = rows;
    expect(ongoing).toMatchObject({
      replica: "replica2 · ch2",
      lastedText: "1 m so far",
      peakText: "—",
      causeWords: "blocked by a session on the replica",
      causeTone: "bad",
      endedText: "ongoing",
      ongoing: true,
      href: "/clusters/3/episodes/2",
    });
    expect(done).toMatchObject({ replica: "replica1", lastedText: "5 m", peakText: "48.3 s", causeWords: "durable serial apply", endedText: "by itself" });
  });

  it("says so when no cause was named", () => {
    expect(buildEpisodeRows([episodeSummary({ main_cause: null })], T0)[0]).toMatchObject({ causeWords: "no cause named", causeTone: "muted" });
  });
});

describe("episodeWindow", () => {
  it("adds a fifth either side, or as long as the episode when short (15 s to a minute)", () => {
    expect(episodeWindow(episodeSummary(), T0 + 3_600_000)).toEqual({ startMs: T0 - 60_000, endMs: T0 + 360_000 });
    const long = episodeSummary({ ended_at: iso(T0 + 3_600_000) });
    expect(episodeWindow(long, T0 + 86_400_000)).toEqual({ startMs: T0 - 720_000, endMs: T0 + 4_320_000 });
    // A ten-second episode is not a sliver at the edge of a two-minute chart (seen in e2e).
    const short = episodeSummary({ ended_at: iso(T0 + 10_000) });
    expect(episodeWindow(short, T0 + 3_600_000)).toEqual({ startMs: T0 - 15_000, endMs: T0 + 25_000 });
  });

  it("runs an ongoing episode to now", () => {
    expect(episodeWindow(episodeSummary({ ended_at: null }), T0 + 30_000)).toEqual({ startMs: T0 - 30_000, endMs: T0 + 30_000 });
  });
});

describe("journalHref", () => {
  it("opens the journal on an hour centred on the step (dates only in the URL)", () => {
    const href = journalHref(3, T0);
    expect(href.startsWith("/clusters/3/journal?")).toBe(true);
    const query = parseJournalQuery(new URLSearchParams(href.split("?")[1]));
    expect(query).toMatchObject({ range: "custom", fromMs: T0 - 1_800_000, toMs: T0 + 1_800_000 });
  });
});

describe("buildEpisodePage", () => {
  it("draws the causes on the episode's window and tables each cause's evidence", () => {
    const model = buildEpisodePage(episodeDetail(), "#2f6fde", T0 + 3_600_000);
    expect(model.startMs).toBe(T0 - 60_000);
    expect(model.strip.segments.map((s) => [s.cause, s.row])).toEqual([
      ["relay_log_durability", 0],
      ["blocked_by_session", 1],
    ]);
    expect(model.sections.map((s) => s.cause)).toEqual(["relay_log_durability", "blocked_by_session"]);
    expect(model.sections[1]?.groups.map((g) => g.kind)).toEqual(["session"]);
    expect(model.actions).toEqual([
      "Set sync_relay_log=0 on the replica (journal step to verify).",
      "Ask the owner of session 4711 to commit or roll back; Lagscope never kills it.",
    ]);
    expect(model.others).toEqual([
      { label: "replica2", peakText: "47.7 s", laggedText: "lagged too", lagged: true },
      { label: "replica3", peakText: "200 ms", laggedText: "did not lag", lagged: false },
    ]);
    expect(model.peakAtText).toBe(formatDateTime(T0 + 200_000));
    expect(model.endedBy).toBeNull();
  });

  it("links the step that ended it to the journal, and marks it among the changes", () => {
    const ended = change();
    const other = change({ change_id: 5, param: "sync_binlog", at: iso(T0 + 100_000) });
    const model = buildEpisodePage(
      episodeDetail({ ended_how: "after_step", ended_by: ended, param_changes: [ended, other] }),
      "#2f6fde",
      T0 + 3_600_000,
    );
    expect(model.endedBy).toMatchObject({ id: 7, text: "innodb_flush_log_at_trx_commit 1→2", endedIt: true, href: journalHref(3, T0 + 240_000) });
    expect(model.changes.map((c) => [c.id, c.endedIt])).toEqual([
      [5, false],
      [7, true],
    ]);
    expect(model.row.endedText).toBe("after step: innodb_flush_log_at_trx_commit 1→2");
  });

  it("names an action once however many segments share it", () => {
    const model = buildEpisodePage(
      episodeDetail({ causes: [segment(), segment({ started_at: iso(T0 + 120_000), ended_at: null }), blockedSegment({ action: "" })] }),
      "#2f6fde",
      T0 + 3_600_000,
    );
    expect(model.actions).toEqual(["Set sync_relay_log=0 on the replica (journal step to verify)."]);
  });
});
