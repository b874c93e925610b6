// Builders of journal and compare answers for the view-model tests (typed against the schema).
import type { Schemas } from "../api/client";

type Stats = Schemas["WindowStatsOut"];

export function stats(over: Partial<Stats> = {}): Stats {
  return {
    samples: 20,
    lag_p50: 40,
    lag_p95: 46.23,
    lag_max: 50,
    caught_up_share: 0,
    apply_rate: 103.4,
    source_rate: 2500,
    ...over,
  };
}

export const NEAR: Schemas["ChannelRef"] = {
  channel_id: 11,
  channel_name: "",
  instance_id: 2,
  instance_name: "replica1",
  region: "near",
};
export const FAR: Schemas["ChannelRef"] = {
  channel_id: 12,
  channel_name: "",
  instance_id: 3,
  instance_name: "replica2",
  region: "far",
};

export function impact(
  channel: Schemas["ChannelRef"],
  over: Partial<Schemas["ChannelImpactOut"]> = {},
): Schemas["ChannelImpactOut"] {
  return {
    channel,
    in_scope: channel.instance_name === "replica1",
    before: stats(),
    after: stats({ lag_p50: 30, lag_p95: 35.14, lag_max: 36, apply_rate: 948 }),
    impact: {
      verdict: "improved",
      lag_change_p50: -10,
      load_change: 1,
      reason: "apply rate 103 → 948 trx/s while the load stayed the same",
    },
    ...over,
  };
}

export function change(over: Partial<Schemas["ParamChangeOut"]> = {}): Schemas["ParamChangeOut"] {
  return {
    id: 1,
    instance_id: 2,
    instance_name: "replica1",
    name: "innodb_flush_log_at_trx_commit",
    old_value: "1",
    new_value: "2",
    last_old_at: "2026-11-23T10:40:58Z",
    first_new_at: "2026-11-23T10:41:00Z",
    ...over,
  };
}

export function step(over: Partial<Schemas["StepOut"]> = {}): Schemas["StepOut"] {
  return {
    at: "2026-11-23T10:41:00Z",
    changed_after: "2026-11-23T10:40:58Z",
    kind: "param_change",
    summary: "replica1: innodb_flush_log_at_trx_commit 1 → 2",
    changes: [change()],
    annotations: [],
    before: { start: "2026-11-23T10:40:40Z", end: "2026-11-23T10:40:58Z" },
    after: { start: "2026-11-23T10:41:03Z", end: "2026-11-23T10:41:23Z" },
    impacts: [impact(NEAR), impact(FAR)],
    ...over,
  };
}

export function journal(over: Partial<Schemas["JournalOut"]> = {}): Schemas["JournalOut"] {
  return {
    cluster_id: 1,
    start: "2026-11-23T10:00:00Z",
    end: "2026-11-23T11:00:00Z",
    width_s: 20,
    settle_s: 3,
    min_samples: 5,
    group_s: 10,
    channels: [NEAR, FAR],
    steps: [step()],
    truncated: false,
    ...over,
  };
}

export function note(over: Partial<Schemas["AnnotationOut"]> = {}): Schemas["AnnotationOut"] {
  return {
    id: 5,
    cluster_id: 1,
    instance_id: null,
    channel_id: null,
    starts_at: "2026-11-23T10:42:00Z",
    ends_at: null,
    text: "parallel apply",
    tags: [],
    author: "admin",
    author_id: 1,
    created_at: "2026-11-23T10:42:00Z",
    updated_by: null,
    updated_at: null,
    scope: "cluster",
    ...over,
  };
}
