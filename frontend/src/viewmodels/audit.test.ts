import { describe, expect, it } from "vitest";
import { auditRows, changeLines, type AuditEvent } from "./audit";

const event = (over: Partial<AuditEvent>): AuditEvent => ({
  id: 1,
  at: "2026-12-06T03:00:00Z",
  actor: "admin",
  source: "127.0.0.1",
  via: "PATCH /api/v1/instances/3",
  action: "update",
  kind: "instance",
  object_id: 3,
  object_name: "db1",
  changes: {},
  ...over,
});

describe("changeLines", () => {
  it("says before → after, what was set or removed, and secrets by what happened only", () => {
    expect(
      changeLines({
        region: ["eu", "us"],
        host: [null, "10.0.0.5"],
        port: [3306, null],
        password_enc: "replaced",
        heartbeat_password_enc: "cleared",
      }),
    ).toEqual(["heartbeat password cleared", "host: 10.0.0.5", "password replaced", "port: was 3306", "region: eu → us"]);
  });

  it("shows lists and objects as JSON and an empty string as such", () => {
    expect(changeLines({ tags: [["a"], ["a", "b"]], reason: ["", "maintenance"] })).toEqual([
      'reason: "" → maintenance',
      'tags: ["a"] → ["a","b"]',
    ]);
  });
});

describe("auditRows", () => {
  it("names the change in the domain's words, by name or else by id", () => {
    const rows = auditRows(
      [event({}), event({ id: 2, action: "create", kind: "alert_rule", object_name: "", object_id: 9 })],
      (iso) => `at ${iso}`,
    );
    expect(rows.map((r) => r.what)).toEqual(["update instance db1", "create alert rule #9"]);
    expect(rows[0]).toMatchObject({ at: "at 2026-12-06T03:00:00Z", who: "admin", from: "127.0.0.1" });
  });
});
