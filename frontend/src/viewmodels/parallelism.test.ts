import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { channelStatus } from "../test/statusData";
import {
  buildParallelismView,
  caveatText,
  drainText,
  DURABILITY_CAVEAT,
  durabilityNowText,
  formatSpeedup,
  NO_SAMPLE_TEXT,
} from "./parallelism";

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
    expect(view).toEqual({ kind: "none", text: NO_SAMPLE_TEXT, caveat: caveatText(2), durability: [], durabilityCaveat: null });
    expect(NO_SAMPLE_TEXT).toBe(
      "No sample of the source's binlog yet (every 5 min; a MySQL source needs REPLICATION SLAVE for it)",
    );
  });

  it("says why the newest run read nothing, in the server's words", () => {
    const refused = "mysql-main: Access denied (reading commit parents needs REPLICATION SLAVE; optional)";
    const view = buildParallelismView(
      answer({ source: null, sampled_at: null, transactions: 0, groups: 0, mean_group_size: 0, problem: refused }),
      { nowMs: NOW },
    );
    expect(view.kind === "none" && view.text).toBe(`No sample of the source's binlog: ${refused}`);
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

const ALL_THREE = ["innodb_flush_log_at_trx_commit 1 → 2", "sync_binlog 1 → 0", "sync_relay_log 1 → 0"];
type Removed = Schemas["RemovedCostOut"];
const REDO: Removed = { what: "redo log fsync", s_per_trx: 0.0003 };
const BINLOG: Removed = { what: "binary log fsync", s_per_trx: 0.00072 };
const RELAY: Removed = { what: "relay-log wait", s_per_trx: 0.0004 };

/** A prediction as the API prices it: 520 trx/s now at 1.76 ms per transaction; the factor is
 * applier ÷ (applier − removed), capped at 10. */
function flush(over: Partial<Schemas["DurabilityPredictionOut"]> = {}): Schemas["DurabilityPredictionOut"] {
  const applier = over.applier_s_per_trx ?? 0.00176;
  const removed = over.removed ?? [REDO, BINLOG, RELAY];
  const total = removed.reduce((sum, r) => sum + r.s_per_trx, 0);
  const capped = total >= applier * 0.9;
  const factor = capped ? 10 : applier / (applier - total);
  return {
    settings: ALL_THREE,
    applier_s_per_trx: applier,
    removed,
    factor,
    capped,
    predicted: 520 * factor,
    measured: null,
    error: null,
    unknown: [],
    ...over,
  };
}

describe("durabilityNowText", () => {
  it("says the factor, the capacity from now, and the time it removes of the applier's", () => {
    // 1.76 ÷ (1.76 − 1.42) = 5.18×; 520 × 5.18 = 2,692 trx/s.
    expect(durabilityNowText(flush())).toBe(
      "relaxing innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0, sync_relay_log 1 → 0: ~5.2× apply capacity " +
        "(~2,692 trx/s from 520 now); its fsyncs and relay-log waits are 1.42 ms of its 1.76 ms per transaction",
    );
  });

  it("says when the factor is the model's cap, not a measured ceiling", () => {
    // 1.90 ms of 2.00 ms is ≥ 90 %: capped at 10×, 5,200 trx/s from 520.
    const capped = flush({
      settings: ["innodb_flush_log_at_trx_commit 1 → 2", "sync_binlog 1 → 0"],
      applier_s_per_trx: 0.002,
      removed: [
        { what: "redo log fsync", s_per_trx: 0.0008 },
        { what: "binary log fsync", s_per_trx: 0.0011 },
      ],
    });
    expect(capped.capped).toBe(true);
    expect(durabilityNowText(capped)).toBe(
      "relaxing innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0: ~10.0× apply capacity " +
        "(~5,200 trx/s from 520 now); its fsyncs are 1.90 ms of its 2.00 ms per transaction; " +
        "capped at 10×: its waits were over 90 % of its time, and what its CPU allows without " +
        "them was not measured",
    );
  });

  it("says why when there is no prediction", () => {
    const none = flush({
      applier_s_per_trx: null,
      removed: [],
      factor: null,
      capped: false,
      predicted: null,
      unknown: ["the applier was busy 40% of the window: not saturated"],
    });
    expect(durabilityNowText(none)).toBe(
      "relaxing innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0, sync_relay_log 1 → 0: " +
        "no prediction (the applier was busy 40% of the window: not saturated)",
    );
    expect(durabilityNowText({ ...none, unknown: ["a", "b"] })).toBe(
      "relaxing innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0, sync_relay_log 1 → 0: no prediction (a; b)",
    );
  });

  it("prices what it can and says what it could not", () => {
    // The relay-log wait unread: 1.76 ÷ (1.76 − 1.02) = 2.38×; 520 × 2.38 = 1,237 trx/s.
    const partly = flush({ removed: [REDO, BINLOG], unknown: ["relay-log wait: the applier's state was not read"] });
    expect(durabilityNowText(partly)).toBe(
      "relaxing innodb_flush_log_at_trx_commit 1 → 2, sync_binlog 1 → 0, sync_relay_log 1 → 0: ~2.4× apply capacity " +
        "(~1,237 trx/s from 520 now); its fsyncs are 1.02 ms of its 1.76 ms per transaction; " +
        "not priced: relay-log wait: the applier's state was not read",
    );
    // Only the relay log's waits priced: 1.76 ÷ 1.36 = 1.29×, 673 trx/s.
    const relay = flush({
      settings: ["sync_relay_log 1 → 0"],
      removed: [RELAY],
      unknown: ["redo log fsync: not timed (performance_schema's file summary)"],
    });
    expect(durabilityNowText(relay)).toBe(
      "relaxing sync_relay_log 1 → 0: ~1.3× apply capacity (~673 trx/s from 520 now); " +
        "its relay-log waits are 0.40 ms of its 1.76 ms per transaction; " +
        "not priced: redo log fsync: not timed (performance_schema's file summary)",
    );
    // Nothing priced: the capacity stays, and the reasons say why.
    const nothing = flush({
      settings: ["sync_binlog 1 → 0"],
      removed: [],
      unknown: ["binary log fsync: not timed (performance_schema's file summary)"],
    });
    expect(durabilityNowText(nothing)).toBe(
      "relaxing sync_binlog 1 → 0: ~1.0× apply capacity (~520 trx/s from 520 now); " +
        "not priced: binary log fsync: not timed (performance_schema's file summary)",
    );
  });
});

describe("buildParallelismView's relaxed-flush lines", () => {
  const durability: Schemas["DurabilityNowOut"][] = [
    { instance_id: 2, instance: "replica1", channel_id: 7, prediction: flush() },
    { instance_id: 3, instance: "replica2", channel_id: 9, prediction: flush({ removed: [REDO, BINLOG] }) },
  ];

  it("has one line per replica channel and the caveat once, sampled or not", () => {
    const view = buildParallelismView(answer({ durability }), { nowMs: NOW });
    expect(view.durability).toEqual([
      { channelId: 7, label: "replica1", text: durabilityNowText(durability[0]!.prediction) },
      { channelId: 9, label: "replica2", text: durabilityNowText(durability[1]!.prediction) },
    ]);
    expect(view.durabilityCaveat).toBe(DURABILITY_CAVEAT);
    expect(DURABILITY_CAVEAT).toBe(
      "Relaxed flush trades durability: a crash may lose up to a second of redo log and relay-log positions (a GTID replica re-fetches them).",
    );
    // No binlog sample (a MySQL source): the flush lines do not need one.
    const unsampled = buildParallelismView(answer({ source: null, sampled_at: null, durability }), { nowMs: NOW });
    expect(unsampled.kind).toBe("none");
    expect(unsampled.durability.map((d) => d.label)).toEqual(["replica1", "replica2"]);
    expect(unsampled.durabilityCaveat).toBe(DURABILITY_CAVEAT);
  });

  it("has no lines and no caveat when no replica is behind with strict settings (or an older API)", () => {
    for (const view of [
      buildParallelismView(answer({ durability: [] }), { nowMs: NOW }),
      buildParallelismView(answer(), { nowMs: NOW }),
    ]) {
      expect(view.durability).toEqual([]);
      expect(view.durabilityCaveat).toBeNull();
    }
  });

  it("keeps only the episode's channel's line when given one (the episode page)", () => {
    const labels = (channelId?: number) => {
      const view = buildParallelismView(answer({ durability }), { nowMs: NOW, channelId });
      return [view.durability.map((d) => d.label), view.durabilityCaveat] as const;
    };
    expect(labels()).toEqual([["replica1", "replica2"], DURABILITY_CAVEAT]);
    expect(labels(9)).toEqual([["replica2"], DURABILITY_CAVEAT]);
    // By channel, not instance: channel 2 is replica1's instance id, not a channel with a line.
    expect(labels(2)).toEqual([[], null]);
    expect(labels(8)).toEqual([[], null]);
  });
});
