import { describe, expect, it } from "vitest";
import { JOURNAL_DEFAULTS, journalSearch, journalWindow, parseJournalQuery } from "./journalQuery";

const parse = (text: string) => parseJournalQuery(new URLSearchParams(text));

describe("journal query in the URL", () => {
  it("defaults to the last 24 hours with the API's window settings", () => {
    expect(parse("")).toEqual(JOURNAL_DEFAULTS);
    expect(journalSearch(JOURNAL_DEFAULTS)).toBe("");
    expect(journalWindow(JOURNAL_DEFAULTS)).toEqual({ kind: "last", spanMs: 86_400_000 });
  });

  it("reads a custom window and window settings, and writes them back", () => {
    const query = parse("from=2026-11-23T10:00:00Z&to=2026-11-23T11:00:00Z&width=20&settle=3&min_samples=5");
    expect(query).toMatchObject({ range: "custom", widthS: 20, settleS: 3, minSamples: 5 });
    expect(journalWindow(query)).toEqual({
      kind: "fixed",
      startMs: Date.parse("2026-11-23T10:00:00Z"),
      endMs: Date.parse("2026-11-23T11:00:00Z"),
    });
    expect(journalSearch(query)).toBe(
      "?from=2026-11-23T10%3A00%3A00.000Z&to=2026-11-23T11%3A00%3A00.000Z&width=20&settle=3&min_samples=5",
    );
  });

  it("ignores what the API would refuse", () => {
    expect(parse("range=3y&width=0&settle=-1&min_samples=2.5&group=9999")).toEqual(JOURNAL_DEFAULTS);
    expect(parse("from=2026-11-23T11:00:00Z&to=2026-11-23T10:00:00Z").range).toBe("24h");
    expect(parse("range=1h").range).toBe("1h");
  });
});
