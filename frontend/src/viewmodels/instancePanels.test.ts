import { describe, expect, it } from "vitest";
import { buildInstancePanels, commitsPerGroup, durabilityWarnings, heartbeatWarnings, instanceColors } from "./instancePanels";
import { instanceStatus } from "../test/statusData";

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
const pt = (s: number, v: number) => ({ t: T0 + s * 1000, min: v, avg: v, max: v, last: v, n: 1 });
const series = (metric: "binlog_commits_per_s" | "binlog_group_commits_per_s" | "commits_per_s", values: number[]) => ({
  metric,
  start: T0,
  end: T0 + 3000,
  series: [
    {
      channel_id: null,
      instance_id: 1,
      metric,
      resolution: "raw" as const,
      bucket_ms: 1000,
      points: values.map((v, i) => pt(i, v)),
      note: null,
    },
  ],
});

const semiSync = (perInstance: Record<number, (number | null)[]>) => ({
  metric: "semi_sync_avg_wait_s" as const,
  start: T0,
  end: T0 + 3000,
  series: Object.entries(perInstance).map(([id, values]) => ({
    channel_id: null,
    instance_id: Number(id),
    metric: "semi_sync_avg_wait_s" as const,
    resolution: "raw" as const,
    bucket_ms: 1000,
    points: values.map((v, i) => (v === null ? { t: T0 + i * 1000, min: null, avg: null, max: null, last: null, n: 0 } : pt(i, v))),
    note: null,
  })),
});

describe("semi-sync wait panel", () => {
  const instances = [
    { id: 1, name: "source", role: "source" as const },
    { id: 2, name: "replica1", role: "replica" as const },
  ];
  const build = (series: Parameters<typeof buildInstancePanels>[0]["series"]) =>
    buildInstancePanels({ series, instances, colors: new Map([[1, "#000"]]), pollIntervalS: 1, endMs: T0 + 3000 }).find(
      (p) => p.key === "semi-sync",
    );

  it("draws the source's average wait in milliseconds", () => {
    const panel = build({ semi_sync_avg_wait_s: semiSync({ 1: [0.0004, 0.0012, 0.002] }) });
    expect(panel?.unit).toBe("ms");
    expect(panel?.lines).toEqual([{ key: "semi_sync_avg_wait_s:1", label: "source", color: "#000", dash: undefined }]);
    expect(panel?.rows.map((r) => r["semi_sync_avg_wait_s:1"])).toEqual([0.4, 1.2, 2]);
    expect(panel?.empty).toBe(false);
  });

  it("leaves out a server that never waited, and says semi-sync is off when none did", () => {
    const some = build({ semi_sync_avg_wait_s: semiSync({ 1: [0, 0.001, 0], 2: [0, 0, 0] }) });
    expect(some?.lines.map((l) => l.label)).toEqual(["source"]);
    expect(some?.rows.map((r) => r["semi_sync_avg_wait_s:1"])).toEqual([0, 1, 0]);
    const none = [
      {}, // not polled, or no server has the counter
      { semi_sync_avg_wait_s: semiSync({}) },
      { semi_sync_avg_wait_s: semiSync({ 1: [null, null, null] }) }, // MySQL without the plugin
      { semi_sync_avg_wait_s: semiSync({ 1: [0, 0, 0], 2: [0, null, 0] }) }, // MariaDB, semi-sync off
    ];
    for (const series of none) {
      const panel = build(series);
      expect(panel?.empty).toBe(true);
      expect(panel?.lines).toEqual([]);
      expect(panel?.emptyText).toMatch(/semi-synchronous replication is not enabled/);
    }
  });

  it("keeps the generic empty text for the other panels", () => {
    const panels = buildInstancePanels({ series: {}, instances, colors: new Map(), pollIntervalS: 1, endMs: T0 + 3000 });
    expect(panels.find((p) => p.key === "dblwr")?.emptyText).toBe("No samples in this range (kept at poll resolution only).");
  });
});

describe("instance panels", () => {
  it("divides binlog commits by groups, leaving buckets without groups empty", () => {
    const commits = [
      { t: 0, value: 100, min: null, max: null },
      { t: 1, value: 50, min: null, max: null },
    ];
    const groups = [
      { t: 0, value: 20, min: null, max: null },
      { t: 1, value: 0, min: null, max: null },
    ];
    expect(commitsPerGroup(commits, groups).map((p) => p.value)).toEqual([5, null]);
  });

  it("builds a panel per question with a line per instance", () => {
    const panels = buildInstancePanels({
      series: {
        commits_per_s: series("commits_per_s", [200, 210, 190]),
        binlog_commits_per_s: series("binlog_commits_per_s", [200, 210, 190]),
        binlog_group_commits_per_s: series("binlog_group_commits_per_s", [50, 70, 95]),
      },
      instances: [{ id: 1, name: "source", role: "source" }],
      colors: new Map([[1, "#000"]]),
      pollIntervalS: 1,
      endMs: T0 + 3000,
    });
    const perGroup = panels.find((p) => p.key === "per-group");
    expect(perGroup?.rows.map((r) => r["commits_per_group:1"])).toEqual([4, 3, 2]);
    expect(panels.find((p) => p.key === "commits")?.lines).toEqual([
      { key: "commits_per_s:1", label: "source", color: "#000", dash: undefined },
    ]);
    expect(panels.find((p) => p.key === "dblwr")?.empty).toBe(true);
  });

  it("colours the source in ink and replicas like their channel", () => {
    const colors = instanceColors(
      [
        { id: 1, role: "source" },
        { id: 2, role: "replica" },
      ],
      [{ id: 9, instance_id: 2 }],
      new Map([[9, "#2f6fde"]]),
    );
    expect([...colors]).toEqual([
      [1, "var(--ink)"],
      [2, "#2f6fde"],
    ]);
  });

  it("warns about a disabled redo log and doublewrite off", () => {
    const warnings = durabilityWarnings([
      instanceStatus({ name: "r1", redo_log_enabled: false, doublewrite: "OFF" }),
      instanceStatus({ name: "r2", redo_log_enabled: true, doublewrite: "ON" }),
    ]);
    expect(warnings.map((w) => w.instance)).toEqual(["r1", "r1"]);
    expect(warnings[0]?.text).toContain("redo log disabled");
    expect(warnings[1]?.text).toContain("innodb_doublewrite=OFF");
  });

  it("says when the heartbeat writer has stopped", () => {
    const problem = "heartbeat writer stopped since 2026-11-25T09:30:00Z: its row on the source no longer advances, so the heartbeat lag is ignored";
    const warnings = heartbeatWarnings([
      instanceStatus({ name: "src", role: "source", heartbeat_problem: problem }),
      instanceStatus({ name: "r1" }),
    ]);
    expect(warnings.map((w) => w.instance)).toEqual(["src"]);
    expect(warnings[0]?.text).toContain("heartbeat writer stopped since 2026-11-25T09:30:00Z");
  });
});
