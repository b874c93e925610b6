import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { ALERT_METRICS } from "../api/metrics";
import {
  newOverride,
  ruleBody,
  ruleFormValues,
  rulePatch,
  ruleProblems,
  withoutOverride,
  withOverride,
  withTarget,
} from "./ruleForm";
import { withCluster } from "./scope";

const stored: Schemas["RuleOut"] = {
  id: 3,
  name: "far replica lag",
  metric: "param_changed",
  threshold: 45,
  for_s: 5,
  resolve_threshold: 20,
  keep_firing_s: 15,
  repeat_s: null,
  cluster_id: 1,
  instance_id: 3,
  channel_id: 9,
  region: "far",
  target_ids: [2],
  severity: "critical",
  labels: { team: "db" },
  null_policy: "keep",
  params: { names: ["sync_binlog", "innodb_flush_log_at_trx_commit"], window_s: 120 },
  overrides: [
    { instance_id: 2, channel_id: null, threshold: 90, for_s: null, resolve_threshold: 60, enabled: true },
    { instance_id: null, channel_id: 7, threshold: null, for_s: 30, resolve_threshold: null, enabled: false },
  ],
  enabled: false,
  created_at: "2026-11-23T09:00:00Z",
  updated_at: "2026-11-23T09:00:00Z",
};

describe("ruleFormValues", () => {
  it("a new rule: lag above 30 s for a minute, everywhere, a warning", () => {
    const values = ruleFormValues();
    expect(values).toMatchObject({ name: "", metric: "lag", threshold: "30", forS: "60", keepFiring: "0", severity: "warning" });
    expect(values.scope).toEqual({ clusterId: "", instanceId: "", channelId: "", region: "" });
    expect(values.nullPolicy).toBe("firing_if_broken");
    expect(values.overrides).toEqual([]);
  });

  it("reads every field of a stored rule", () => {
    const values = ruleFormValues(stored);
    expect(values).toMatchObject({
      name: "far replica lag",
      metric: "param_changed",
      threshold: "45",
      forS: "5",
      resolve: "20",
      keepFiring: "15",
      repeat: "",
      severity: "critical",
      labels: "team=db",
      nullPolicy: "keep",
      paramNames: "sync_binlog, innodb_flush_log_at_trx_commit",
      targetIds: [2],
    });
    expect(values.scope).toEqual({ clusterId: "1", instanceId: "3", channelId: "9", region: "far" });
    expect(values.overrides).toEqual([
      { kind: "instance", instanceId: "2", channelId: "", threshold: "90", forS: "", resolve: "60", enabled: true },
      { kind: "channel", instanceId: "", channelId: "7", threshold: "", forS: "30", resolve: "", enabled: false },
    ]);
  });
});

describe("ruleBody and rulePatch", () => {
  it("an untouched edit sends the stored rule back, window and enabled included", () => {
    const expected: Record<string, unknown> = { ...stored };
    for (const key of ["id", "created_at", "updated_at"]) delete expected[key];
    // An override's own resolve bound is not shown, and still sent back as it was.
    expect(rulePatch(stored, ruleFormValues(stored))).toEqual(expected);
  });

  it("a new rule's body: numbers parsed, empty optionals null, enabled, a 10-minute window", () => {
    const values = { ...ruleFormValues(), name: "lag", resolve: " ", repeat: "300", labels: "team=db, tier = 1" };
    expect(ruleBody(values)).toEqual({
      name: "lag",
      metric: "lag",
      threshold: 30,
      for_s: 60,
      resolve_threshold: null,
      keep_firing_s: 0,
      repeat_s: 300,
      cluster_id: null,
      instance_id: null,
      channel_id: null,
      region: null,
      target_ids: [],
      severity: "warning",
      labels: { team: "db", tier: "1" },
      null_policy: "firing_if_broken",
      params: { names: [], window_s: 600 },
      overrides: [],
      enabled: true,
    });
  });

  it("an empty keep-firing is 0, and a new cluster drops the instance and channel", () => {
    const values = ruleFormValues(stored);
    const body = ruleBody({ ...values, keepFiring: "", scope: withCluster(values.scope, "4") });
    expect(body.keep_firing_s).toBe(0);
    expect([body.cluster_id, body.instance_id, body.channel_id, body.region]).toEqual([4, null, null, "far"]);
  });

  it("overrides still at 'choose…' are not sent; a channel's names no instance", () => {
    let values = { ...ruleFormValues(), overrides: [newOverride("instance"), newOverride("channel")] };
    expect(ruleBody(values).overrides).toEqual([]);
    values = withOverride(values, 1, { channelId: "7", threshold: "90" });
    expect(ruleBody(values).overrides).toEqual([
      { instance_id: null, channel_id: 7, threshold: 90, for_s: null, resolve_threshold: null, enabled: true },
    ]);
    expect(withoutOverride(values, 0).overrides).toHaveLength(1);
  });

  it("targets are ticked once and unticked", () => {
    const values = withTarget(withTarget(ruleFormValues(), 2, true), 2, true);
    expect(values.targetIds).toEqual([2]);
    expect(withTarget(values, 2, false).targetIds).toEqual([]);
  });
});

describe("ruleProblems", () => {
  const valid = { ...ruleFormValues(), name: "lag" };

  it("none for a valid rule, the defaults with a name", () => {
    expect(ruleProblems(valid)).toEqual([]);
    expect(ruleProblems(ruleFormValues(stored))).toEqual([]);
  });

  it("names what the API would refuse", () => {
    expect(ruleProblems({ ...valid, name: " " })).toEqual(["The rule needs a name."]);
    expect(ruleProblems({ ...valid, threshold: "" })).toEqual(["The threshold must be a number."]);
    expect(ruleProblems({ ...valid, forS: "-1" })).toEqual(["For (s) must be between 0 and 604800."]);
    expect(ruleProblems({ ...valid, repeat: "30" })).toEqual(["Repeat every (s) must be between 60 and 604800, or empty."]);
    expect(ruleProblems({ ...valid, labels: "1team=db" })).toEqual([
      'Label "1team": a name is letters, digits and _, not starting with a digit.',
    ]);
    expect(ruleProblems({ ...valid, metric: "param_changed", paramNames: "sync_binlog, max-lag" })).toEqual([
      '"max-lag" is not a server parameter name.',
    ]);
    const override = { ...newOverride("instance"), instanceId: "2", forS: "-5" };
    expect(ruleProblems({ ...valid, overrides: [override] })).toEqual(["Override 1: its wait must be 0 s or more."]);
  });

  it("parameter names are checked only for param_changed", () => {
    expect(ruleProblems({ ...valid, paramNames: "max-lag" })).toEqual([]);
  });
});

describe("ALERT_METRICS", () => {
  it("lists each alert metric once", () => {
    expect(new Set(ALERT_METRICS).size).toBe(ALERT_METRICS.length);
    expect(ALERT_METRICS).toContain("lag");
    expect(ALERT_METRICS).toContain("errant_trx");
  });
});
