import { describe, expect, it } from "vitest";
import {
  buildJournalModel,
  buildStepChartModel,
  comparable,
  compareStepLink,
  CSV_HEADER,
  csvField,
  describeStep,
  explorerLink,
  journalCsv,
  journalMarkdown,
  pairText,
  roundPercent,
  roundRate,
  roundSeconds,
} from "./journal";
import { change, FAR, impact, journal, NEAR, note, stats, step } from "../test/journalData";

const UTC = "UTC";

function twoSteps() {
  return journal({
    steps: [
      // Out of order on purpose: the model sorts by time.
      step({
        at: "2026-11-23T10:42:00Z",
        kind: "mixed",
        changes: [change({ id: 2, name: "slave_parallel_threads", old_value: "0", new_value: "4" })],
        annotations: [note()],
        before: { start: "2026-11-23T10:41:23Z", end: "2026-11-23T10:41:58Z" },
        after: { start: "2026-11-23T10:42:03Z", end: "2026-11-23T10:42:23Z" },
        impacts: [
          impact(NEAR, {
            before: stats({ lag_p95: 35.14 }),
            after: stats({ lag_p95: 6.912, lag_p50: 3, caught_up_share: 0.5 }),
          }),
          impact(FAR, {
            after: stats({ lag_p95: null, samples: 2 }),
            impact: { verdict: "insufficient_data", lag_change_p50: null, load_change: null, reason: "after: 2 samples" },
          }),
        ],
      }),
      step(),
    ],
  });
}

describe("rounding", () => {
  it("rounds seconds by size, rates and shares, and leaves unknowns empty", () => {
    expect(roundSeconds(6.912)).toBe("6.9");
    expect(roundSeconds(0.345)).toBe("0.34");
    expect(roundSeconds(46.23)).toBe("46.2");
    expect(roundSeconds(123.6)).toBe("124");
    expect(roundSeconds(0)).toBe("0.00");
    expect(roundSeconds(-0.5)).toBe("-0.50");
    expect(roundSeconds(null)).toBe("");
    expect(roundRate(948.4)).toBe("948");
    expect(roundRate(2.345)).toBe("2.3");
    expect(roundPercent(0.5)).toBe("50");
    expect(roundPercent(undefined)).toBe("");
  });

  it("prints a pair with its unit and a dash for an unknown side", () => {
    expect(pairText({ before: "46.2", after: "35.1" }, "s")).toBe("46.2 → 35.1 s");
    expect(pairText({ before: "46.2", after: "" }, "s")).toBe("46.2 → — s");
    expect(pairText({ before: "", after: "" }, "s")).toBe("—");
  });
});

describe("buildJournalModel", () => {
  it("lists steps in time order, numbered, with their changes grouped per instance", () => {
    const model = buildJournalModel(twoSteps(), undefined, UTC);
    expect(model.steps.map((s) => s.number)).toEqual([1, 2]);
    expect(model.steps.map((s) => s.when)).toEqual(["23 Nov 10:41:00", "23 Nov 10:42:00"]);
    expect(model.steps.map((s) => s.clock)).toEqual(["10:41:00", "10:42:00"]);
    expect(model.steps[0]?.what).toEqual(["replica1: innodb_flush_log_at_trx_commit 1 → 2"]);
    expect(model.steps[1]?.what).toEqual(["replica1: slave_parallel_threads 0 → 4", "note: parallel apply"]);
    expect(model.channels.map((c) => [c.label, c.region])).toEqual([
      ["replica1", "near"],
      ["replica2", "far"],
    ]);
  });

  it("rounds every figure once, and keeps the verdict as words, icon and reason", () => {
    const model = buildJournalModel(twoSteps(), undefined, UTC);
    const [near, far] = model.steps[1]?.cells ?? [];
    expect(near?.figures.lagP95).toEqual({ before: "35.1", after: "6.9" });
    expect(near?.figures.caughtUp).toEqual({ before: "0", after: "50" });
    expect(near?.figures.applyRate).toEqual({ before: "103", after: "103" });
    expect(near?.inScope).toBe(true);
    expect(near?.verdictInfo).toMatchObject({ label: "improved", icon: "✓", tone: "ok" });
    expect(far?.inScope).toBe(false);
    expect(far?.figures.lagP95.after).toBe("");
    expect(far?.verdictInfo.label).toBe("insufficient data");
    expect(far?.reason).toBe("after: 2 samples");
  });

  it("uses the cluster's colours when given, so a replica looks the same on every page", () => {
    const colors = new Map([
      [11, "#111111"],
      [12, "#222222"],
    ]);
    const model = buildJournalModel(journal(), colors, UTC);
    expect(model.channels.map((c) => c.color)).toEqual(["#111111", "#222222"]);
    expect(model.steps[0]?.cells[1]?.channel.color).toBe("#222222");
  });

  it("carries a worker-count step's prediction for the replica it touched, and none elsewhere", () => {
    const data = journal({
      steps: [
        step({
          changes: [change({ name: "slave_parallel_threads", old_value: "0", new_value: "4" })],
          impacts: [
            impact(NEAR, {
              before: stats({ capacity: 500 }),
              prediction: {
                workers_before: 1,
                workers_after: 4,
                mode: "conservative",
                factor: 2,
                stream_allows: 2.93,
                cores: 2,
                predicted: 1000,
                measured: 900,
                error: -0.1,
              },
            }),
            impact(FAR),
          ],
        }),
      ],
    });
    const [near, far] = buildJournalModel(data, undefined, UTC).steps[0]?.cells ?? [];
    expect(near?.prediction).toEqual({
      instance: "replica1",
      predicted:
        "1 → 4 workers (conservative): predicted ~1,000 trx/s (2.0× the 500 trx/s before; " +
        "the source's writes allow 2.9×, capped by 2 cores)",
      measured: "measured 900 trx/s (−10 % vs predicted)",
    });
    expect(far?.prediction).toBeNull();
    expect(buildJournalModel(journal(), undefined, UTC).steps[0]?.cells.map((c) => c.prediction)).toEqual([null, null]);
  });

  it("carries a flush step's durability prediction for the replica it touched, and none elsewhere", () => {
    const data = journal({
      steps: [
        step({
          changes: [change({ name: "sync_binlog", old_value: "1", new_value: "0" })],
          impacts: [
            impact(NEAR, {
              before: stats({ capacity: 500 }),
              durability: {
                settings: ["sync_binlog 1 → 0"],
                applier_s_per_trx: 0.002,
                removed: [{ what: "binary log fsync", s_per_trx: 0.0012 }],
                factor: 2.5,
                capped: false,
                predicted: 1250,
                measured: null,
                error: null,
                unknown: [],
              },
            }),
            impact(FAR),
          ],
        }),
      ],
    });
    const [near, far] = buildJournalModel(data, undefined, UTC).steps[0]?.cells ?? [];
    expect(near?.durability).toEqual({
      instance: "replica1",
      predicted:
        "sync_binlog 1 → 0: predicted ~1,250 trx/s (2.5× the 500 trx/s before; " +
        "removes 1.20 ms binary log fsync of 2.00 ms per transaction)",
      measured: "measured: not measurable (it kept up after the step)",
    });
    expect(near?.prediction).toBeNull();
    expect(far?.durability).toBeNull();
  });

  it("describes a change to or from NULL in words", () => {
    expect(describeStep(step({ changes: [change({ old_value: null, new_value: "" })] }))).toEqual([
      "replica1: innodb_flush_log_at_trx_commit unset → (empty)",
    ]);
  });
});

describe("links", () => {
  it("opens the explorer on the step's before and after windows", () => {
    const [first] = buildJournalModel(journal(), undefined, UTC).steps;
    if (!first) throw new Error("no step");
    const url = new URL(explorerLink(1, first), "http://x");
    expect(url.pathname).toBe("/clusters/1");
    expect(url.searchParams.get("from")).toBe("2026-11-23T10:40:35.000Z");
    expect(url.searchParams.get("to")).toBe("2026-11-23T10:41:28.000Z");
  });

  it("compares a replica's before window with its after window", () => {
    const [first] = buildJournalModel(journal(), undefined, UTC).steps;
    if (!first) throw new Error("no step");
    expect(comparable(first)).toBe(true);
    const url = new URL(compareStepLink(1, first, 11), "http://x");
    expect(url.pathname).toBe("/clusters/1/compare");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      channel: "11",
      a_from: "2026-11-23T10:40:40.000Z",
      a_to: "2026-11-23T10:40:58.000Z",
      b_from: "2026-11-23T10:41:03.000Z",
      b_to: "2026-11-23T10:41:23.000Z",
    });
    const empty = { ...first, before: { startMs: 5, endMs: 5 } };
    expect(comparable(empty)).toBe(false);
  });
});

describe("buildStepChartModel", () => {
  it("starts from the baseline and shows where each step left the p95 of each replica", () => {
    const chart = buildStepChartModel(buildJournalModel(twoSteps(), undefined, UTC));
    expect(chart.series.map((s) => s.key)).toEqual(["c11", "c12"]);
    expect(chart.rows.map((r) => r.category)).toEqual(["before", "step 1", "step 2"]);
    expect(chart.rows.map((r) => r.values)).toEqual([
      { c11: 46.2, c12: 46.2 },
      { c11: 35.1, c12: 35.1 },
      { c11: 6.9, c12: null },
    ]);
    expect(chart.empty).toBe(false);
  });

  it("is empty without steps", () => {
    const chart = buildStepChartModel(buildJournalModel(journal({ steps: [] }), undefined, UTC));
    expect(chart.rows).toEqual([]);
    expect(chart.empty).toBe(true);
  });
});

describe("exports", () => {
  it("quotes CSV fields and defuses formulas", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("a, b")).toBe('"a, b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)");
    expect(csvField("-12.5")).toBe("-12.5");
  });

  it("writes one CSV row per step and replica with the page's figures", () => {
    const csv = journalCsv(buildJournalModel(twoSteps(), undefined, UTC));
    const lines = csv.trimEnd().split("\r\n");
    expect(lines[0]).toBe(CSV_HEADER.join(","));
    expect(lines).toHaveLength(5);
    expect(CSV_HEADER.slice(6, 10)).toEqual([
      "lag_p50_before_s",
      "lag_p50_after_s",
      "lag_p95_before_s",
      "lag_p95_after_s",
    ]);
    expect(lines[3]).toBe(
      [
        "2",
        "2026-11-23T10:42:00.000Z",
        "replica1: slave_parallel_threads 0 → 4; note: parallel apply",
        "replica1",
        "near",
        "yes",
        "40.0,3.0,35.1,6.9,50.0,50.0,0,50,103,103,2500,2500,20,20",
        "improved",
        "apply rate 103 → 948 trx/s while the load stayed the same",
      ].join(","),
    );
    expect(lines[4]).toContain(",,");
    expect(lines[4]).toMatch(/,insufficient data,after: 2 samples$/);
  });

  it("writes the ticket table: p95 per replica and the verdict of the replicas touched", () => {
    const md = journalMarkdown(buildJournalModel(twoSteps(), undefined, UTC), "lab | main");
    const lines = md.trimEnd().split("\n");
    expect(lines[0]).toBe("### Tuning journal: lab \\| main");
    expect(lines[2]).toBe(
      "| step | when | what changed | replica1 (near) lag p95 | replica2 (far) lag p95 | verdict |",
    );
    expect(lines[4]).toBe(
      "| 1 | 23 Nov 10:41:00 | replica1: innodb_flush_log_at_trx_commit 1 → 2 | 46.2 → 35.1 s | 46.2 → 35.1 s | " +
        "improved — apply rate 103 → 948 trx/s while the load stayed the same |",
    );
    expect(lines[5]).toContain("| 35.1 → 6.9 s | 46.2 → — s |");
  });
});
