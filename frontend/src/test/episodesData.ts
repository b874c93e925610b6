// Builders of the episodes/causes API answers for the view-model tests (docs/api.md, "Lag episodes").
import type {
  CauseSegment,
  ChangeRef,
  ChannelCauses,
  CurrentCause,
  EpisodeDetail,
  EpisodeSummary,
} from "../viewmodels/episodeTypes";

export const T0 = Date.parse("2026-11-23T10:00:00Z");
export const iso = (ms: number) => new Date(ms).toISOString();

export function segment(over: Partial<CauseSegment> = {}): CauseSegment {
  return {
    cause: "relay_log_durability",
    words: "fsync per event on the receiver",
    started_at: iso(T0),
    ended_at: iso(T0 + 60_000),
    confidence: 0.9,
    sentence: "The IO thread fsyncs every event (sync_relay_log=1); near and far lag alike, so it is not the network.",
    action: "Set sync_relay_log=0 on the replica (journal step to verify).",
    evidence: { io_queueing_samples: 44, samples: 45, sync_relay_log: "1", near_and_far_alike: true },
    needs: null,
    ...over,
  };
}

export function blockedSegment(over: Partial<CauseSegment> = {}): CauseSegment {
  return segment({
    cause: "blocked_by_session",
    words: "blocked by a session on the replica",
    sentence: "Blocked for 95 s by session 4711 (report@10.0.3.4, idle in transaction for 20 min).",
    action: "Ask the owner of session 4711 to commit or roll back; Lagscope never kills it.",
    // The keys analysis/causes/rules_applier.py writes for a named holder.
    evidence: {
      lock: "row",
      wait_s: 95,
      blocker_thread_id: 4711,
      blocker_user: "report",
      blocker_host: "10.0.3.4",
      blocker_command: "Sleep",
      blocker_time_s: 1200,
      blocker_state: "",
      blocker_statement: "SELECT * FROM shop.orders WHERE id = 1 FOR UPDATE /* <b>x</b> */",
      blocker_object: "shop.orders",
      blocked_thread_id: 12,
    },
    ...over,
  });
}

/** A keyless scan's finding, as rules_applier.py words its evidence (the table as schema.table). */
export function noKeySegment(over: Partial<CauseSegment> = {}): CauseSegment {
  return segment({
    cause: "no_usable_key",
    words: "row lookups without a usable key",
    sentence: "Each row event on replica1 scans shop.audit_log (no primary key) to find its row under row-based replication; 2100000 rows changed so far.",
    action: "Add a primary key (or a unique key over NOT NULL columns) to shop.audit_log.",
    evidence: {
      table: "shop.audit_log",
      has_primary_key: false,
      has_usable_key: false,
      event: "Update_rows_v1",
      state: "Update_rows_log_event::find_row()",
      state_polls: 3,
      polls: 3,
      trx_state: "RUNNING",
      rows_modified: 2100000,
    },
    ...over,
  });
}

export function channelCauses(over: Partial<ChannelCauses> = {}): ChannelCauses {
  return { channel_id: 1, instance_id: 2, replica: "replica1", channel: "", segments: [segment()], ...over };
}

export function change(over: Partial<ChangeRef> = {}): ChangeRef {
  return {
    change_id: 7,
    instance: "replica1",
    param: "innodb_flush_log_at_trx_commit",
    old_value: "1",
    new_value: "2",
    at: iso(T0 + 240_000),
    ...over,
  };
}

export function episodeSummary(over: Partial<EpisodeSummary> = {}): EpisodeSummary {
  return {
    id: 11,
    cluster_id: 3,
    channel_id: 1,
    instance_id: 2,
    replica: "replica1",
    region: "near",
    channel: "",
    started_at: iso(T0),
    ended_at: iso(T0 + 300_000),
    duration_s: 300,
    peak_lag_s: 48.3,
    peak_at: iso(T0 + 200_000),
    main_cause: { cause: "durable_apply", words: "durable serial apply" },
    ended_how: "by_itself",
    ended_by: null,
    ...over,
  };
}

export function episodeDetail(over: Partial<EpisodeDetail> = {}): EpisodeDetail {
  return {
    ...episodeSummary(),
    causes: [segment(), blockedSegment({ started_at: iso(T0 + 30_000), ended_at: iso(T0 + 120_000) })],
    others: [
      { replica: "replica2", channel: "", peak_lag_s: 47.7, lagged: true },
      { replica: "replica3", channel: "", peak_lag_s: 0.2, lagged: false },
    ],
    param_changes: [],
    ...over,
  };
}

export function currentCause(over: Partial<CurrentCause> = {}): CurrentCause {
  return {
    cause: "large_transaction",
    words: "one large transaction",
    since: iso(T0),
    confidence: 0.8,
    sentence: "Applying one transaction (GTID 0-1-99) for 340 s, 2100000 rows changed so far.",
    action: "Nothing to tune: split such transactions at the source.",
    evidence: { trx_gtid: "0-1-99", trx_age_s: 340, trx_rows_modified: 2100000 },
    needs: null,
    ...over,
  };
}
