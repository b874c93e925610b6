import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { channelStatus } from "../test/statusData";
import { buildParallelismView, caveatText, drainText, formatSpeedup, NO_SAMPLE_TEXT } from "./parallelism";

const NOW = Date.parse("2026-11-27T11:00:00Z");

/** Speed-ups for workers 1…16: 1 for one worker, then as given (the rest flat at the last). */
function curve(...figures: number[]): Schemas["SpeedupOut"][] {
  return Array.from({ length: 16 }, (_, i) => ({ workers: i + 1, speedup: figures[i] ?? figures[figures.length - 1] ?? 1 }));
}

function answer(over: Partial<Schemas["ParallelismOut"]> = {}): Schemas["ParallelismOut"] {
  return {
    source: "source",
    sampled_at: "2026-11-27T10:57:00Z",
    transactions: 322,
    groups: 237,
    mean_group_size: 1.36,
    // 1, 1.31, 1.34, 1.36 (4 workers), then 1.36 flat.
    conservative: curve(1, 1.31, 1.34, 1.36),
    // 1, 1.98, 2.9, 3.84 (4 workers), …, 7.4 at 8 and 12.05 at 16.
    optimistic: curve(1, 1.98, 2.9, 3.84, 4.7, 5.5, 6.4, 7.4, 8, 8.6, 9.3, 10, 10.6, 11.2, 11.7, 12.05),
    cores: 2,
    ...over,
  };
}

describe("formatSpeedup", () => {
  it("has one decimal, 1.0× for one worker, and a dash when missing", () => {
    expect(formatSpeedup(1)).toBe("1.0×");
    expect(formatSpeedup(2.64)).toBe("2.6×");
    expect(formatSpeedup(12.05)).toBe("12.1×");
    expect(formatSpeedup(null)).toBe("—");
    expect(formatSpeedup(Number.NaN)).toBe("—");
  });
});

describe("buildParallelismView", () => {
  it("says there is no sample yet when the source's binlog has not been sampled, with the caveat", () => {
    const view = buildParallelismView(answer({ source: null, sampled_at: null, transactions: 0, groups: 0, mean_group_size: 0 }), {
      nowMs: NOW,
    });
    expect(view).toEqual({ kind: "none", text: NO_SAMPLE_TEXT, caveat: caveatText(2) });
    expect(NO_SAMPLE_TEXT).toBe("No sample of the source's binlog yet (every 5 min; MariaDB sources)");
  });

  it("states the configured cores as the cap, and says so when they are not configured", () => {
    expect(caveatText(2)).toBe("Capped by the replica's cores: on 2 cores at most ~2×.");
    expect(caveatText(16)).toBe("Capped by the replica's cores: on 16 cores at most ~16×.");
    expect(caveatText(1)).toBe("Capped by the replica's cores: on 1 core at most ~1×.");
    expect(caveatText(null)).toBe(
      "Not capped by the replica's cores (LAGSCOPE_REPLICA_CORES is not set): C cores apply at most ~C×.",
    );
    const view = buildParallelismView(answer({ cores: 8 }), { nowMs: NOW });
    expect(view.caveat).toBe("Capped by the replica's cores: on 8 cores at most ~8×.");
  });

  it("tabulates 1, 2, 4, 8 and 16 workers, both modes", () => {
    const view = buildParallelismView(answer(), { nowMs: NOW });
    if (view.kind !== "sampled") throw new Error("expected a sampled view");
    expect(view.rows).toEqual([
      { workers: 1, conservative: "1.0×", optimistic: "1.0×" },
      { workers: 2, conservative: "1.3×", optimistic: "2.0×" },
      { workers: 4, conservative: "1.4×", optimistic: "3.8×" },
      { workers: 8, conservative: "1.4×", optimistic: "7.4×" },
      { workers: 16, conservative: "1.4×", optimistic: "12.1×" },
    ]);
  });

  it("heads with the 4-worker figures and says the group size, the sample and its age", () => {
    const view = buildParallelismView(answer(), { nowMs: NOW });
    if (view.kind !== "sampled") throw new Error("expected a sampled view");
    expect(view.headline).toBe("The source's writes allow ~1.4× apply capacity with 4 workers (conservative); up to ~3.8× optimistic.");
    expect(view.groupSize).toBe("1.36 transactions per group commit");
    expect(view.sample).toBe("322 transactions sampled 3 m ago");
    expect(view.caveat).toBe("Capped by the replica's cores: on 2 cores at most ~2×.");
    expect(view.drains).toEqual([]);
  });

  it("finds the figures by worker count, not by position", () => {
    const shuffled = [...curve(1, 2, 3, 2.5)].reverse();
    const view = buildParallelismView(answer({ conservative: shuffled, optimistic: shuffled.slice(0, -1) }), { nowMs: NOW });
    if (view.kind !== "sampled") throw new Error("expected a sampled view");
    expect(view.rows.find((r) => r.workers === 4)).toEqual({ workers: 4, conservative: "2.5×", optimistic: "2.5×" });
    // The optimistic curve lacks 1 worker (the shuffled list's last): a dash, not a shifted figure.
    expect(view.rows[0]).toEqual({ workers: 1, conservative: "1.0×", optimistic: "—" });
  });

  it("has no headline when the 4-worker figure is missing", () => {
    const view = buildParallelismView(answer({ optimistic: curve(1).filter((s) => s.workers !== 4) }), { nowMs: NOW });
    if (view.kind !== "sampled") throw new Error("expected a sampled view");
    expect(view.headline).toBeNull();
  });

  it("words a single transaction and a never-sampled window", () => {
    const view = buildParallelismView(answer({ transactions: 1, mean_group_size: 1, sampled_at: null }), { nowMs: NOW });
    if (view.kind !== "sampled") throw new Error("expected a sampled view");
    expect(view.groupSize).toBe("1 transaction per group commit");
    expect(view.sample).toBe("1 transaction sampled never");
  });

  it("adds the drain sentence for apply-bound channels only", () => {
    const behind = channelStatus({ id: 7, instance: "replica2", verdict: "apply_bound", trx_behind: 6000, apply_rate: 100, source_rate: 150 });
    const calm = channelStatus({ id: 8, instance: "replica1" });
    const conservative = curve(1, 1.8, 2.6, 3);
    const view = buildParallelismView(answer({ conservative }), { nowMs: NOW, channels: [behind, calm] });
    if (view.kind !== "sampled") throw new Error("expected a sampled view");
    // 2.6× capped at 2 cores: 100 × 2 − 150 = 50 trx/s of headway; 6000 / 50 = 120 s.
    expect(view.drains).toEqual([
      { channelId: 7, label: "replica2", text: "with 4 workers: ~2.0× apply capacity, enough to drain this backlog in ~2 m" },
    ]);
  });

  it("keeps only the episode's channel's drain sentence when given one (the episode page)", () => {
    const channels = [
      channelStatus({ id: 7, instance: "replica2", verdict: "apply_bound", trx_behind: 6000, apply_rate: 100, source_rate: 150 }),
      channelStatus({ id: 9, instance: "replica3", verdict: "apply_bound", trx_behind: 3000, apply_rate: 100, source_rate: 150 }),
    ];
    const conservative = curve(1, 1.8, 2.6, 3);
    const drains = (channelId?: number) => {
      const view = buildParallelismView(answer({ conservative }), { nowMs: NOW, channels, channelId });
      if (view.kind !== "sampled") throw new Error("expected a sampled view");
      return view.drains.map((d) => d.label);
    };
    expect(drains()).toEqual(["replica2", "replica3"]);
    expect(drains(9)).toEqual(["replica3"]);
    // The episode's channel is caught up now, or not in the status: no line, not another channel's.
    expect(drains(8)).toEqual([]);
  });
});

describe("drainText", () => {
  const behind = (over: Partial<Schemas["ChannelStatusOut"]> = {}) =>
    channelStatus({ verdict: "apply_bound", trx_behind: 1000, apply_rate: 100, source_rate: 110, ...over });

  it("uses the speed-up below the cores, and the cores above", () => {
    // 100 × 1.5 − 110 = 40 trx/s; 1000 / 40 = 25 s.
    expect(drainText(behind(), 1.5, 2)).toBe("with 4 workers: ~1.5× apply capacity, enough to drain this backlog in ~25 s");
    // 100 × min(3.8, 2) − 110 = 90 trx/s; 1000 / 90 = 11.1 s → 11 s.
    expect(drainText(behind(), 3.8, 2)).toBe("with 4 workers: ~2.0× apply capacity, enough to drain this backlog in ~11 s");
    expect(drainText(behind(), 3.8, 4)).toBe("with 4 workers: ~3.8× apply capacity, enough to drain this backlog in ~3.7 s");
    // Cores not configured: the stream's speed-up, uncapped.
    expect(drainText(behind(), 3.8, null)).toBe("with 4 workers: ~3.8× apply capacity, enough to drain this backlog in ~3.7 s");
  });

  it("says when the capacity would not outrun the source", () => {
    // 100 × 1.05 − 110 < 0; 100 × 1.1 − 110 is 0 give or take a float's last bit.
    expect(drainText(behind(), 1.05, 2)).toBe("with 4 workers: ~1.1× apply capacity, not enough to drain this backlog (the source writes as fast)");
    expect(drainText(behind(), 1.1, 2)).toBe("with 4 workers: ~1.1× apply capacity, not enough to drain this backlog (the source writes as fast)");
  });

  it("stays silent without a backlog, a rate, a speed-up, or an apply-bound verdict", () => {
    expect(drainText(behind({ trx_behind: 0 }), 2, 2)).toBeNull();
    expect(drainText(behind({ trx_behind: null }), 2, 2)).toBeNull();
    expect(drainText(behind({ apply_rate: 0 }), 2, 2)).toBeNull();
    expect(drainText(behind({ source_rate: null }), 2, 2)).toBeNull();
    expect(drainText(behind({ verdict: "receive_bound" }), 2, 2)).toBeNull();
    expect(drainText(behind({ verdict: "caught_up" }), 2, 2)).toBeNull();
    expect(drainText(behind(), null, 2)).toBeNull();
  });
});
