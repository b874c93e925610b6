import { describe, expect, it } from "vitest";
import { buildDecompositionModel, buildRateModel, buildVerdictBand } from "./decomposition";

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
const pt = (s: number, v: number) => ({ t: T0 + s * 1000, min: v, avg: v, max: v, last: v, n: 1 });
const series = (metric: "not_received" | "received_not_applied" | "apply_rate" | "source_rate", data: Record<number, ReturnType<typeof pt>[]>) => ({
  metric,
  start: T0,
  end: T0 + 100_000,
  series: Object.entries(data).map(([id, points]) => ({
    channel_id: Number(id),
    instance_id: Number(id) + 10,
    metric,
    resolution: "raw" as const,
    bucket_ms: 1000,
    points,
    note: null,
  })),
});
const channels = [
  { id: 1, instance: "replica1", name: "" },
  { id: 2, instance: "replica2", name: "" },
];
const colors = new Map([
  [1, "#111"],
  [2, "#222"],
]);

describe("buildDecompositionModel", () => {
  it("stacks not received and received-not-applied per replica, with its verdict band", () => {
    const panels = buildDecompositionModel({
      notReceived: series("not_received", { 1: [pt(0, 5), pt(1, 6)], 2: [pt(0, 0)] }),
      receivedNotApplied: series("received_not_applied", { 1: [pt(0, 50), pt(1, 40)] }),
      verdicts: {
        cluster_id: 1,
        start: T0,
        end: T0 + 100_000,
        channels: [
          {
            channel_id: 1,
            instance_id: 11,
            resolution: "raw",
            bucket_ms: 1000,
            runs: [
              { start: T0, end: T0 + 50_000, verdict: "apply_bound" },
              { start: T0 + 50_000, end: T0 + 100_000, verdict: "caught_up" },
            ],
          },
        ],
      },
      channels,
      colors,
      hidden: [],
      pollIntervalS: 1,
      startMs: T0,
      endMs: T0 + 2000,
    });
    expect(panels.map((p) => p.label)).toEqual(["replica1", "replica2"]);
    expect(panels[0]?.rows).toEqual([
      { t: T0, nr: 5, rna: 50 },
      { t: T0 + 1000, nr: 6, rna: 40 },
    ]);
    expect(panels[1]?.rows).toEqual([{ t: T0, nr: 0, rna: null }]);
    // The range ends at 2 s: only the apply-bound run shows, across the whole width.
    expect(panels[0]?.band.map((b) => [b.label, b.tone, b.leftPct, b.widthPct])).toEqual([
      ["apply-bound", "warn", 0, 100],
    ]);
  });

  it("clips the band to the range", () => {
    const band = buildVerdictBand([{ start: T0 - 50_000, end: T0 + 50_000, verdict: "stopped" }], T0, T0 + 100_000);
    expect(band).toHaveLength(1);
    expect(band[0]).toMatchObject({ leftPct: 0, widthPct: 50, label: "stopped", icon: "■" });
  });
});

describe("buildRateModel", () => {
  it("draws the source rate once and each replica's apply rate", () => {
    const model = buildRateModel({
      sourceRate: series("source_rate", { 1: [pt(0, 200)], 2: [pt(0, 200)] }),
      applyRate: series("apply_rate", { 1: [pt(0, 150)], 2: [pt(0, 199)] }),
      channels,
      colors,
      hidden: [2],
      pollIntervalS: 1,
      endMs: T0 + 1000,
    });
    expect(model.lines.map((l) => l.label)).toEqual(["source writes", "replica1 applies"]);
    expect(model.rows).toEqual([{ t: T0, source: 200, "apply:1": 150 }]);
  });
});
