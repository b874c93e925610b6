import { describe, expect, it } from "vitest";
import { formatClock } from "../format/format";
import { blockedSegment, channelCauses, currentCause, iso, segment, T0 } from "../test/episodesData";
import {
  buildWhyStrips,
  causeDetail,
  causeTone,
  confidenceText,
  currentCauseView,
  evidenceLine,
  evidenceValueText,
  MIN_WIDTH_PCT,
  stripSegments,
} from "./causes";

const START = T0;
const END = T0 + 600_000; // ten minutes: one minute is 10 %

describe("stripSegments", () => {
  it("places a segment on the time axis in percent of the range", () => {
    const { rows, segments } = stripSegments([segment({ started_at: iso(T0 + 60_000), ended_at: iso(T0 + 180_000) })], START, END, END);
    expect(rows).toBe(1);
    expect(segments).toHaveLength(1);
    expect(segments[0]?.leftPct).toBeCloseTo(10);
    expect(segments[0]?.widthPct).toBeCloseTo(20);
    expect(segments[0]?.words).toBe("fsync per event on the receiver");
    expect(segments[0]?.open).toBe(false);
  });

  it("clips a segment to the range and runs an open one to the range's end", () => {
    const { segments } = stripSegments(
      [
        segment({ started_at: iso(T0 - 120_000), ended_at: iso(T0 + 60_000) }),
        segment({ started_at: iso(T0 + 540_000), ended_at: null }),
      ],
      START,
      END,
      END,
    );
    expect(segments[0]?.leftPct).toBe(0);
    expect(segments[0]?.widthPct).toBeCloseTo(10);
    expect(segments[1]?.leftPct).toBeCloseTo(90);
    expect(segments[1]?.widthPct).toBeCloseTo(10);
    expect(segments[1]?.open).toBe(true);
    expect(segments[1]?.label).toContain("so far");
  });

  it("leaves out segments wholly outside the range", () => {
    const { segments } = stripSegments(
      [segment({ started_at: iso(T0 - 300_000), ended_at: iso(T0 - 60_000) }), segment({ started_at: iso(END + 1000), ended_at: null })],
      START,
      END,
      END,
    );
    expect(segments).toEqual([]);
  });

  it("gives a one-poll segment a visible sliver, kept inside the strip", () => {
    const { segments } = stripSegments([segment({ started_at: iso(END - 500), ended_at: iso(END) })], START, END, END);
    expect(segments[0]?.widthPct).toBe(MIN_WIDTH_PCT);
    expect((segments[0]?.leftPct ?? 0) + (segments[0]?.widthPct ?? 0)).toBeLessThanOrEqual(100);
  });

  it("stacks overlapping causes on rows and reuses a row once it is free", () => {
    const { rows, segments } = stripSegments(
      [
        segment({ started_at: iso(T0), ended_at: iso(T0 + 120_000) }),
        blockedSegment({ started_at: iso(T0 + 60_000), ended_at: iso(T0 + 180_000) }),
        segment({ cause: "durable_apply", words: "durable serial apply", started_at: iso(T0 + 120_000), ended_at: iso(T0 + 240_000) }),
      ],
      START,
      END,
      END,
    );
    expect(rows).toBe(2);
    expect(segments.map((s) => [s.cause, s.row])).toEqual([
      ["relay_log_durability", 0],
      ["blocked_by_session", 1],
      ["durable_apply", 0],
    ]);
    expect(segments[1]?.tone).toBe("bad");
  });

  it("marks a low-confidence finding tentative", () => {
    const { segments } = stripSegments([segment({ confidence: 0.3 })], START, END, END);
    expect(segments[0]?.tentative).toBe(true);
    expect(segments[0]?.detail.confidence).toBe("likely (confidence 30 %)");
  });
});

describe("buildWhyStrips", () => {
  const channels = [
    { id: 2, instance_id: 3, instance: "replica2", name: "" },
    { id: 1, instance_id: 2, instance: "replica1", name: "" },
  ];
  const colors = new Map([
    [1, "#2f6fde"],
    [2, "#0f9d8a"],
  ]);

  it("draws one strip per replica channel in the chart's order, with or without causes", () => {
    const model = buildWhyStrips({ causes: [channelCauses()], channels, colors, hidden: [], startMs: START, endMs: END, nowMs: END });
    expect(model.strips.map((s) => [s.label, s.segments.length, s.color])).toEqual([
      ["replica1", 1, "#2f6fde"],
      ["replica2", 0, "#0f9d8a"],
    ]);
    expect(model.empty).toBe(false);
  });

  it("hides the strips of hidden channels and keeps a removed replica's causes last", () => {
    const model = buildWhyStrips({
      causes: [channelCauses(), channelCauses({ channel_id: 9, instance_id: 9, replica: "old", channel: "c1" })],
      channels,
      colors,
      hidden: [1],
      startMs: START,
      endMs: END,
      nowMs: END,
    });
    expect(model.strips.map((s) => s.label)).toEqual(["replica2", "old · c1"]);
  });

  it("is empty when no channel has a cause in the range (still one strip each)", () => {
    const model = buildWhyStrips({ causes: undefined, channels, colors, hidden: [], startMs: START, endMs: END, nowMs: END });
    expect(model.empty).toBe(true);
    expect(model.strips).toHaveLength(2);
    expect(model.strips.every((s) => s.rows === 1)).toBe(true);
  });
});

describe("evidence as text", () => {
  it("says durations for _s keys, yes/no for flags, exact ids and counts", () => {
    expect(evidenceValueText("blocker_time_s", 1200)).toBe("20 m");
    expect(evidenceValueText("table_has_primary_key", false)).toBe("no");
    expect(evidenceValueText("blocker_thread_id", 4711)).toBe("4711");
    expect(evidenceValueText("trx_rows_modified", 2100000)).toBe("2100000");
    expect(evidenceValueText("ratio", 3.14159)).toBe("3.142");
    expect(evidenceValueText("retried_per_s", 0.25)).toBe("0.25/s");
    expect(evidenceValueText("x", null)).toBe("—");
    expect(evidenceValueText("statement", "<b>x</b>")).toBe("<b>x</b>");
  });

  it("puts the evidence on one line, key by key", () => {
    expect(evidenceLine({ sync_relay_log: "1", io_queueing_samples: 44 })).toBe("sync_relay_log: 1; io_queueing_samples: 44");
  });

  it("details a segment: when, sentence, action, confidence, evidence", () => {
    const detail = causeDetail(segment(), T0 + 600_000);
    expect(detail.when).toBe(`${formatClock(T0)}–${formatClock(T0 + 60_000)} (1 m)`);
    expect(detail.sentence).toContain("sync_relay_log=1");
    expect(detail.action).toContain("sync_relay_log=0");
    expect(detail.confidence).toBe("confidence 90 %");
    expect(detail.evidence).toContainEqual({ key: "near_and_far_alike", text: "yes" });
  });

  it("details a blocking session in an operator's words, grouped as on the episode page", () => {
    const detail = causeDetail(blockedSegment(), T0 + 600_000);
    const session = detail.groups.find((g) => g.kind === "session");
    expect(session?.rows.find((r) => r.key === "blocker_thread_id")).toMatchObject({ label: "session id", text: "4711" });
    expect(session?.rows.find((r) => r.key === "blocker_object")).toMatchObject({ label: "object", text: "shop.orders" });
    // No raw evidence key reads as a label.
    expect(detail.groups.flatMap((g) => g.rows.map((r) => r.label))).not.toContain("blocker_thread_id");
  });

  it("confidence is clamped", () => {
    expect(confidenceText(1.3)).toBe("confidence 100 %");
  });
});

describe("causeTone", () => {
  it("red for a held applier or replication down, grey for what is not a problem", () => {
    expect(causeTone("blocked_by_session")).toBe("bad");
    expect(causeTone("broken")).toBe("bad");
    expect(causeTone("network")).toBe("warn");
    expect(causeTone("delayed_by_design")).toBe("muted");
    expect(causeTone("something_new")).toBe("warn");
  });
});

describe("currentCauseView", () => {
  it("shows the strongest cause in words, the sentence and action on hover", () => {
    const view = currentCauseView([currentCause(), currentCause({ cause: "network", words: "the link to the source" })]);
    expect(view?.words).toBe("one large transaction");
    expect(view?.title).toBe(
      "Applying one transaction (GTID 0-1-99) for 340 s, 2100000 rows changed so far. — Nothing to tune: split such transactions at the source.",
    );
    expect(view?.tone).toBe("warn");
  });

  it("is null without causes (caught up, or an API without them)", () => {
    expect(currentCauseView([])).toBeNull();
    expect(currentCauseView(undefined)).toBeNull();
  });

  it("falls back to the words when the finding has no sentence", () => {
    expect(currentCauseView([currentCause({ sentence: "", action: "" })])?.title).toBe("one large transaction");
  });
});
