import { describe, expect, it } from "vitest";
import { buildChannelPanels, etaText } from "./sidePanel";
import { channelStatus, ETA } from "../test/statusData";
import { currentCause } from "../test/episodesData";

const NOW = Date.parse("2026-11-23T10:00:05Z");

describe("buildChannelPanels", () => {
  it("shows threads, backlog, lag sources and errors as text", () => {
    const [panel] = buildChannelPanels(
      [
        channelStatus({
          sql_running: false,
          verdict: "broken",
          lag_s: null,
          seconds_behind_source: null,
          last_sql_error: "Error 'Duplicate entry '7' for key 'PRIMARY'' on query <b>",
          trx_behind: 1250,
          eta: { ...ETA, seconds: null, catching_up: false, falling_behind_per_s: 12 },
        }),
      ],
      new Map([[1, "#123"]]),
      NOW,
    );
    const row = (term: string) => panel?.rows.find((r) => r.term === term);
    expect(panel?.verdict.label).toBe("broken");
    expect(row("lag")?.value).toBe("no value");
    expect(row("server says")?.value).toBe("NULL");
    expect(row("SQL thread")).toEqual({ term: "SQL thread", value: "stopped", problem: true });
    expect(row("trx behind")?.value).toBe("1.25 k");
    expect(row("ETA")?.value).toBe("not catching up (falling behind 12 trx/s)");
    expect(row("sampled")?.value).toBe("5 s ago");
    expect(panel?.errors).toEqual([{ thread: "SQL", text: "Error 'Duplicate entry '7' for key 'PRIMARY'' on query <b>" }]);
  });

  it("says why it is behind now, in words, with the sentence", () => {
    const [panel] = buildChannelPanels(
      [channelStatus({ verdict: "apply_bound", lag_s: 340, causes: [currentCause()] })],
      new Map([[1, "#123"]]),
      NOW,
    );
    expect(panel?.cause?.words).toBe("one large transaction");
    expect(panel?.cause?.sentence).toContain("2100000 rows changed so far");
    const [calm] = buildChannelPanels([channelStatus()], new Map([[1, "#123"]]), NOW);
    expect(calm?.cause).toBeNull();
  });

  it("words the ETA", () => {
    expect(etaText({ ...ETA, seconds: 0, catching_up: true, falling_behind_per_s: null })).toBe("caught up");
    expect(etaText({ ...ETA, seconds: 90, catching_up: true, falling_behind_per_s: null })).toBe("1 m 30 s to catch up");
    expect(etaText(null)).toBe("unknown");
    expect(etaText({ ...ETA, seconds: null, catching_up: false, falling_behind_per_s: null, never: false, basis: "transaction_progress" })).toBe(
      "unknown: applying one large transaction",
    );
    expect(etaText({ ...ETA, seconds: null, catching_up: false, falling_behind_per_s: null, never: false, basis: null })).toBe("unknown");
    const noisy = { ...ETA, seconds: null, catching_up: false, falling_behind_per_s: 48.4 };
    expect(etaText(noisy, "caught_up")).toBe("caught up");
    expect(etaText(noisy, "apply_bound")).toBe("not catching up (falling behind 48.4 trx/s)");
  });

  it("gives the ETA's band, its basis, and never a time when it cannot catch up", () => {
    expect(etaText({ ...ETA, seconds: 90, catching_up: true, low_s: 60, high_s: 150 })).toBe("1 m 30 s to catch up (1 m–2 m 30 s)");
    expect(etaText({ ...ETA, seconds: 90, catching_up: true, low_s: 90, high_s: 90 })).toBe("1 m 30 s to catch up");
    expect(etaText({ ...ETA, seconds: 340, catching_up: true, basis: "transaction_progress" })).toBe(
      "5 m 40 s to catch up, from the large transaction's progress",
    );
    expect(etaText({ ...ETA, seconds: null, catching_up: false, never: true, falling_behind_per_s: 3 }, "apply_bound")).toBe(
      "not catching up (falling behind 3 trx/s)",
    );
    expect(etaText({ ...ETA, seconds: 90, catching_up: true, never: true, falling_behind_per_s: null }, "apply_bound")).toBe("not catching up");
  });
});

describe("errant transactions in the side panel", () => {
  it("shows the count and set as a problem row, and what to do", () => {
    const problem = "replica1 has 1 transaction the source never wrote: 77-3-1 (the newest per domain) — …";
    const [panel] = buildChannelPanels(
      [channelStatus({ errant_trx: 1, errant_gtids: "77-3-1", errant_problem: problem })],
      new Map([[1, "#123"]]),
      NOW,
    );
    expect(panel?.rows.find((r) => r.term === "errant trx")).toEqual({ term: "errant trx", value: "1: 77-3-1", problem: true });
    expect(panel?.errant).toBe(problem);
  });

  it("says none without a warning", () => {
    const [panel] = buildChannelPanels([channelStatus({ errant_trx: 0, errant_gtids: "" })], new Map(), NOW);
    expect(panel?.rows.find((r) => r.term === "errant trx")).toEqual({ term: "errant trx", value: "0" });
    expect(panel?.errant).toBeNull();
  });
});
