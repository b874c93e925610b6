import { describe, expect, it } from "vitest";
import { blockedSegment, noKeySegment } from "../test/episodesData";
import { evidenceGroups } from "./evidence";

describe("evidenceGroups", () => {
  it("reads a blocked applier's evidence as the blocking session: id, user@host, time, statement", () => {
    const groups = evidenceGroups(blockedSegment().evidence);
    expect(groups.map((g) => g.title)).toEqual(["The blocking session"]);
    expect(groups[0]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["session id", "4711"],
      ["user@host", "report@10.0.3.4"],
      ["lock", "row"],
      ["applier waiting for", "1 m 35 s"],
      ["command", "Sleep"],
      ["idle / busy for", "20 m"],
      ["state", "—"],
      ["statement", "SELECT * FROM shop.orders WHERE id = 1 FOR UPDATE /* <b>x</b> */"],
      ["object", "shop.orders"],
      ["applier thread id", "12"],
    ]);
    expect(groups[0]?.rows.find((r) => r.label === "statement")?.code).toBe(true);
  });

  it("reads a keyless scan as the transaction and the table, with whether it has a primary key", () => {
    const groups = evidenceGroups(noKeySegment().evidence);
    expect(groups.map((g) => g.kind)).toEqual(["transaction", "table", "other"]);
    expect(groups[0]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["state", "RUNNING"],
      ["rows changed", "2100000"],
    ]);
    expect(groups[1]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["table", "shop.audit_log"],
      ["has a primary key", "no"],
      ["has a usable key", "no"],
      ["row event", "Update_rows_v1"],
    ]);
    expect(groups[2]?.rows.map((r) => r.key)).toEqual(["state", "state_polls", "polls"]);
  });

  it("reads a large transaction: GTID, trx id, age, rows changed", () => {
    const groups = evidenceGroups({ trx_age_s: 340, trx_id: "421", gtid: "0-1-99", rows_modified: 2100000, rows_per_s: 6176.5, trx_state: "RUNNING" });
    expect(groups.map((g) => g.kind)).toEqual(["transaction"]);
    expect(groups[0]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["age", "5 m 40 s"],
      ["transaction id", "421"],
      ["GTID", "0-1-99"],
      ["rows changed", "2100000"],
      ["rows changed per second", "6177/s"],
      ["state", "RUNNING"],
    ]);
  });

  it("says a holder it could not name for certain is only likely", () => {
    const groups = evidenceGroups({
      lock: "metadata",
      wait_s: 12,
      candidates: 2,
      candidate_sessions: "31 app@h1; 32 app@h2",
      candidate_thread_id: 31,
      candidate_user: "app",
      candidate_host: "h1",
    });
    expect(groups.map((g) => g.title)).toEqual(["The blocking session", "A likely blocking session (not named for certain)"]);
    expect(groups[1]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["session id", "31"],
      ["user@host", "app@h1"],
      ["sessions that could hold it", "2"],
      ["all of them", "31 app@h1; 32 app@h2"],
    ]);
  });

  it("keeps keys it does not know, under their own names, as text", () => {
    const groups = evidenceGroups({ sync_relay_log: "1", io_queueing_samples: 44, blocker_weird_thing: "z" });
    expect(groups.map((g) => g.kind)).toEqual(["session", "other"]);
    expect(groups[0]?.rows).toEqual([{ key: "blocker_weird_thing", label: "weird thing", text: "z", code: false }]);
    expect(groups[1]?.rows.map((r) => [r.key, r.label, r.text])).toEqual([
      ["sync_relay_log", "sync_relay_log", "1"],
      ["io_queueing_samples", "io_queueing_samples", "44"],
    ]);
  });

  it("says a missing half of user@host, and a table without its schema", () => {
    const groups = evidenceGroups({ blocker_user: "report", table_schema: "shop", table_name: "audit_log", has_primary_key: false });
    expect(groups[0]?.rows[0]).toMatchObject({ label: "user@host", text: "report@—" });
    expect(groups[1]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["table", "shop.audit_log"],
      ["has a primary key", "no"],
    ]);
  });

  it("is empty for no evidence", () => {
    expect(evidenceGroups({})).toEqual([]);
  });
});

describe("the channel's figures in the evidence", () => {
  it("reads them in words, with units, never as field names", () => {
    const groups = evidenceGroups({ lag_s: 12, trx_behind: 400, received_not_applied: 395, apply_rate: 187.8, sync_relay_log: "1" });
    expect(groups.map((g) => g.kind)).toEqual(["other"]);
    const labels = Object.fromEntries((groups[0]?.rows ?? []).map((r) => [r.key, `${r.label}: ${r.text}`]));
    expect(labels.lag_s).toBe("lag: 12 s");
    expect(labels.trx_behind).toBe("transactions behind: 400");
    expect(labels.received_not_applied).toBe("received, not yet applied: 395");
    expect(labels.apply_rate).toBe("apply rate: 187.8 trx/s");
    expect(labels.sync_relay_log).toBe("sync_relay_log: 1");
  });

  it("names the statement the blocked applier waits on in words", () => {
    const groups = evidenceGroups({ lock: "row", waiting_statement: "UPDATE t SET n = 1" });
    const rows = groups.flatMap((g) => g.rows);
    expect(rows.find((r) => r.key === "waiting_statement")?.label).toBe("the applier's statement");
  });
});
