import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { buildParamLanes, cursorLeftPct } from "./paramLanes";

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();
const START = T0;
const END = T0 + 1000 * 1000; // 1000 s

let nextId = 1;
function change(
  instance: [number, string],
  name: string,
  old: string | null,
  next: string | null,
  lastOld: number,
  firstNew: number,
): Schemas["ParamChangeOut"] {
  return {
    id: nextId++,
    instance_id: instance[0],
    instance_name: instance[1],
    name,
    old_value: old,
    new_value: next,
    last_old_at: iso(lastOld),
    first_new_at: iso(firstNew),
  };
}

const R1: [number, string] = [2, "replica1"];
const R2: [number, string] = [3, "replica2"];

describe("buildParamLanes", () => {
  it("shows a string parameter as labelled segments split at the change", () => {
    const model = buildParamLanes([change(R1, "slave_parallel_mode", "conservative", "optimistic", 495, 500)], [2, 3], START, END);
    expect(model.lanes).toHaveLength(1);
    const [lane] = model.lanes;
    expect(lane?.label).toBe("replica1 · slave_parallel_mode");
    expect(lane?.segments.map((s) => [s.label, s.leftPct, s.widthPct])).toEqual([
      ["conservative", 0, 50],
      ["optimistic", 50, 50],
    ]);
  });

  it("puts a marker at the change window: first seen new, after last seen old", () => {
    const model = buildParamLanes([change(R1, "slave_parallel_threads", "0", "4", 495, 500)], [2, 3], START, END);
    const [marker] = model.markers;
    expect(marker?.t).toBe(T0 + 500_000);
    expect(marker?.windowFromMs).toBe(T0 + 495_000);
    expect(marker?.leftPct).toBe(50);
    expect(marker?.title).toBe("replica1: slave_parallel_threads 0 → 4");
    expect(marker?.detail).toMatch(/^changed between \d\d:08:15 and \d\d:08:20$/);
  });

  it("merges the same change on every replica into one 'all replicas' lane", () => {
    const model = buildParamLanes(
      [change(R1, "sync_binlog", "1", "0", 99, 100), change(R2, "sync_binlog", "1", "0", 130, 140)],
      [2, 3],
      START,
      END,
    );
    expect(model.lanes.map((l) => l.label)).toEqual(["all replicas · sync_binlog"]);
    expect(model.markers).toHaveLength(1);
    expect(model.markers[0]?.t).toBe(T0 + 140_000);
    expect(model.markers[0]?.windowFromMs).toBe(T0 + 99_000);
    expect(model.markers[0]?.detail).toContain("(replica1, replica2)");
  });

  it("keeps lanes per instance when replicas differ, several changes in order", () => {
    const model = buildParamLanes(
      [
        change(R1, "sync_binlog", "1", "0", 99, 100),
        change(R1, "sync_binlog", "0", "1", 599, 600),
        change(R2, "replica_parallel_type", "DATABASE", "LOGICAL_CLOCK", 299, 300),
      ],
      [2, 3],
      START,
      END,
    );
    expect(model.lanes.map((l) => l.label)).toEqual(["replica1 · sync_binlog", "replica2 · replica_parallel_type"]);
    expect(model.lanes[0]?.segments.map((s) => s.label)).toEqual(["1", "0", "1"]);
    expect(model.lanes[0]?.segments.map((s) => s.shade)).toEqual([0, 1, 0]);
    expect(model.lanes[1]?.segments.map((s) => s.label)).toEqual(["DATABASE", "LOGICAL_CLOCK"]);
    expect(model.markers.map((m) => m.t - T0)).toEqual([100_000, 300_000, 600_000]);
  });

  it("names unset values and is empty without changes", () => {
    const model = buildParamLanes([change(R1, "slave_parallel_mode", null, "optimistic", 9, 10)], [2], START, END);
    expect(model.lanes[0]?.segments[0]?.label).toBe("unset");
    expect(buildParamLanes([], [2, 3], START, END)).toEqual({ lanes: [], markers: [], startMs: START, endMs: END });
  });
});

describe("cursorLeftPct", () => {
  const model = { startMs: 1_000, endMs: 5_000 };
  it("puts the hovered instant on the lanes' axis", () => {
    expect(cursorLeftPct(model, 1_000)).toBe(0);
    expect(cursorLeftPct(model, 2_000)).toBe(25);
    expect(cursorLeftPct(model, 5_000)).toBe(100);
  });
  it("draws nothing when nothing is hovered or the instant is off the range", () => {
    expect(cursorLeftPct(model, null)).toBeNull();
    expect(cursorLeftPct(model, 999)).toBeNull();
    expect(cursorLeftPct(model, 5_001)).toBeNull();
    expect(cursorLeftPct(model, Number.NaN)).toBeNull();
  });
});
