import { describe, expect, it } from "vitest";
import { blockedSegment } from "../test/episodesData";
import { evidenceGroups } from "./evidence";

describe("evidenceGroups", () => {
  it("reads a blocked applier's evidence as the session, the transaction and the table", () => {
    const groups = evidenceGroups(blockedSegment().evidence);
    expect(groups.map((g) => g.title)).toEqual(["The blocking session", "The transaction", "The table"]);
    const [session, trx, table] = groups;
    expect(session?.rows.map((r) => [r.label, r.text])).toEqual([
      ["session id", "4711"],
      ["user@host", "report@10.0.3.4"],
      ["idle / busy for", "20 m"],
      ["statement", "SELECT * FROM shop.orders WHERE id = 1 FOR UPDATE /* <b>x</b> */"],
      ["lock held", "row"],
      ["applier blocked for", "1 m 35 s"],
    ]);
    expect(session?.rows.find((r) => r.label === "statement")?.code).toBe(true);
    expect(trx?.rows.map((r) => [r.label, r.text])).toEqual([
      ["GTID", "0-1-4242"],
      ["age", "1 m 35 s"],
      ["rows changed", "0"],
    ]);
    expect(table?.rows.map((r) => [r.label, r.text])).toEqual([
      ["table", "shop.orders"],
      ["has a primary key", "yes"],
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
    const groups = evidenceGroups({ blocker_user: "report", table: "audit_log", has_primary_key: false });
    expect(groups[0]?.rows[0]).toMatchObject({ label: "user@host", text: "report@—" });
    expect(groups[1]?.rows.map((r) => [r.label, r.text])).toEqual([
      ["table", "audit_log"],
      ["has a primary key", "no"],
    ]);
  });

  it("is empty for no evidence", () => {
    expect(evidenceGroups({})).toEqual([]);
  });
});
