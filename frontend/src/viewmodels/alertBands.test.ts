import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { formatClock } from "../format/format";
import { alertsAt, buildAlertBands, type AlertBandsInput } from "./alertBands";

const T0 = Date.parse("2026-11-23T10:00:00Z");
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

function event(kind: string, atMs: number, startsMs: number, over: Partial<Schemas["EventOut"]> = {}): Schemas["EventOut"] {
  return {
    id: atMs,
    rule_id: 1,
    cluster_id: 1,
    instance_id: 2,
    channel_id: 5,
    kind,
    at: iso(atMs),
    starts_at: iso(startsMs),
    value: 42,
    suppressed_by: null,
    idempotency_key: `k${atMs}`,
    summary: "",
    explorer_url: "",
    ...over,
  };
}

function firing(sinceMs: number, over: Partial<Schemas["FiringOut"]> = {}): Schemas["FiringOut"] {
  return {
    rule_id: 1,
    rule_name: "Lag over 30 s",
    metric: "lag_s",
    severity: "critical",
    cluster_id: 1,
    instance_id: 2,
    channel_id: 5,
    phase: "firing",
    since: iso(sinceMs),
    value: 42,
    notified: true,
    ...over,
  };
}

const base: AlertBandsInput = {
  events: [],
  firing: [],
  rules: [
    { id: 1, name: "Lag over 30 s", severity: "critical" },
    { id: 2, name: "Apply slower than source", severity: "warning" },
  ],
  names: new Map([
    ["i2", "replica1"],
    ["c5", "replica1"],
    ["i3", "replica2"],
  ]),
  limit: 500,
  startMs: T0,
  endMs: T0 + 60 * MIN,
  nowMs: T0 + 60 * MIN,
};

describe("buildAlertBands", () => {
  it("draws a resolved incident from fired to resolved, labelled with severity and rule in words", () => {
    const model = buildAlertBands({
      ...base,
      events: [event("resolved", T0 + 20 * MIN, T0 + 10 * MIN), event("repeat", T0 + 15 * MIN, T0 + 10 * MIN), event("firing", T0 + 10 * MIN, T0 + 10 * MIN)],
    });
    expect(model.bands).toHaveLength(1);
    expect(model.bands[0]).toMatchObject({
      ruleName: "Lag over 30 s",
      severity: "critical",
      subject: "replica1",
      firedMs: T0 + 10 * MIN,
      resolvedMs: T0 + 20 * MIN,
      drawFromMs: T0 + 10 * MIN,
      drawToMs: T0 + 20 * MIN,
      color: "var(--bad)",
    });
    expect(model.bands[0]?.label).toBe(
      `critical: Lag over 30 s on replica1, fired ${formatClock(T0 + 10 * MIN)}–${formatClock(T0 + 20 * MIN)}`,
    );
    expect(model.note).toBeNull();
  });

  it("runs an incident still firing to now", () => {
    const model = buildAlertBands({
      ...base,
      nowMs: T0 + 50 * MIN,
      events: [event("firing", T0 + 40 * MIN, T0 + 40 * MIN)],
      firing: [firing(T0 + 40 * MIN)],
    });
    expect(model.bands).toHaveLength(1);
    expect(model.bands[0]).toMatchObject({ resolvedMs: null, drawFromMs: T0 + 40 * MIN, drawToMs: T0 + 50 * MIN });
    expect(model.bands[0]?.label).toContain(`firing since ${formatClock(T0 + 40 * MIN)}`);
  });

  it("clips an incident that started before the range, and one that outlasts a fixed window", () => {
    const model = buildAlertBands({
      ...base,
      endMs: T0 + 30 * MIN,
      nowMs: T0 + 90 * MIN,
      events: [event("resolved", T0 + 5 * MIN, T0 - 20 * MIN), event("firing", T0 + 25 * MIN, T0 + 25 * MIN, { rule_id: 2, instance_id: 3, channel_id: null })],
      firing: [firing(T0 + 25 * MIN, { rule_id: 2, instance_id: 3, channel_id: null, severity: "warning" })],
    });
    expect(model.bands.map((b) => [b.ruleName, b.firedMs, b.drawFromMs, b.drawToMs])).toEqual([
      ["Lag over 30 s", T0 - 20 * MIN, T0, T0 + 5 * MIN],
      ["Apply slower than source", T0 + 25 * MIN, T0 + 25 * MIN, T0 + 30 * MIN],
    ]);
    expect(model.bands[1]).toMatchObject({ subject: "replica2", severity: "warning", color: "var(--warn)" });
  });

  it("leaves out incidents wholly outside the range", () => {
    const model = buildAlertBands({
      ...base,
      events: [event("resolved", T0 - 1 * MIN, T0 - 10 * MIN), event("firing", T0 - 10 * MIN, T0 - 10 * MIN)],
    });
    expect(model.bands).toEqual([]);
  });

  it("shows an incident firing now whose events are older than the ones read", () => {
    const model = buildAlertBands({ ...base, firing: [firing(T0 - 120 * MIN), firing(T0, { phase: "pending", rule_id: 2 })] });
    expect(model.bands).toHaveLength(1);
    expect(model.bands[0]).toMatchObject({ ruleName: "Lag over 30 s", resolvedMs: null, drawFromMs: T0, drawToMs: T0 + 60 * MIN });
  });

  it("ends an incident with no resolve recorded and not firing now at its last event", () => {
    // A silenced firing records no resolve.
    const model = buildAlertBands({
      ...base,
      events: [event("repeat", T0 + 30 * MIN, T0 + 20 * MIN), event("firing", T0 + 20 * MIN, T0 + 20 * MIN, { suppressed_by: "silence 3" })],
    });
    expect(model.bands[0]).toMatchObject({ resolvedMs: T0 + 30 * MIN, drawToMs: T0 + 30 * MIN });
    expect(model.bands[0]?.label).toContain(`last seen firing ${formatClock(T0 + 30 * MIN)}`);
    // While what fires now is not known yet, it is not taken as ended.
    const unknown = buildAlertBands({ ...base, firing: undefined, events: [event("firing", T0 + 20 * MIN, T0 + 20 * MIN)] });
    expect(unknown.bands[0]).toMatchObject({ resolvedMs: null, drawToMs: T0 + 60 * MIN });
  });

  it("keeps two incidents of one rule apart by their start, and names a rule it does not know", () => {
    const model = buildAlertBands({
      ...base,
      events: [
        event("resolved", T0 + 50 * MIN, T0 + 40 * MIN, { rule_id: 9 }),
        event("resolved", T0 + 20 * MIN, T0 + 10 * MIN, { rule_id: 9 }),
        event("firing", T0 + 10 * MIN, T0 + 10 * MIN, { rule_id: 9 }),
      ],
    });
    expect(model.bands.map((b) => [b.drawFromMs, b.drawToMs])).toEqual([
      [T0 + 10 * MIN, T0 + 20 * MIN],
      [T0 + 40 * MIN, T0 + 50 * MIN],
    ]);
    expect(model.bands[0]).toMatchObject({ ruleName: "rule 9", severity: "warning" });
  });

  it("says so when the events read stop short of the range's start", () => {
    const events = [event("firing", T0 + 30 * MIN, T0 + 30 * MIN), event("firing", T0 + 20 * MIN, T0 + 20 * MIN)];
    expect(buildAlertBands({ ...base, events, limit: 2 }).note).toContain("only the latest 2 alert events");
    expect(buildAlertBands({ ...base, events, limit: 3 }).note).toBeNull();
  });
});

describe("hidden replicas", () => {
  it("leaves out a hidden channel's alerts, and an instance's when all its channels are hidden", () => {
    const events = [
      event("firing", T0 + 10 * MIN, T0 + 10 * MIN), // channel 5 on instance 2
      event("firing", T0 + 11 * MIN, T0 + 11 * MIN, { rule_id: 2, channel_id: null }), // instance 2
      event("firing", T0 + 12 * MIN, T0 + 12 * MIN, { rule_id: 2, instance_id: 3, channel_id: null }), // instance 3
      event("firing", T0 + 13 * MIN, T0 + 13 * MIN, { rule_id: 2, instance_id: 1, channel_id: null }), // the source
    ];
    const channels = [
      { id: 5, instance_id: 2 },
      { id: 6, instance_id: 3 },
      { id: 7, instance_id: 3 },
    ];
    const shown = (hidden: number[]) =>
      buildAlertBands({ ...base, firing: undefined, events, hidden, channels }).bands.map((b) => `${b.ruleId}:${b.firedMs - T0}`);
    expect(shown([])).toHaveLength(4);
    expect(shown([5])).toEqual([`2:${12 * MIN}`, `2:${13 * MIN}`]);
    expect(shown([6])).toHaveLength(4);
    expect(shown([6, 7])).toEqual([`1:${10 * MIN}`, `2:${11 * MIN}`, `2:${13 * MIN}`]);
  });
});

describe("alertsAt", () => {
  it("lists the bands over an instant", () => {
    const model = buildAlertBands({
      ...base,
      events: [event("resolved", T0 + 20 * MIN, T0 + 10 * MIN), event("resolved", T0 + 30 * MIN, T0 + 15 * MIN, { rule_id: 2 })],
    });
    expect(alertsAt(model, T0 + 12 * MIN).map((b) => b.ruleName)).toEqual(["Lag over 30 s"]);
    expect(alertsAt(model, T0 + 18 * MIN).map((b) => b.ruleName)).toEqual(["Lag over 30 s", "Apply slower than source"]);
    expect(alertsAt(model, T0 + 40 * MIN)).toEqual([]);
  });
});
