import { describe, expect, it } from "vitest";
import { buildConnectionReport, grantStatements } from "./connectionTest";

const base = {
  server: "127.0.0.1:3307",
  flavor: "mariadb",
  version: "11.8.3-MariaDB",
  read_only: true,
  privileges_found: ["REPLICA MONITOR"],
  privileges_missing: ["BINLOG MONITOR", "PROCESS"],
  privileges_excessive: [],
  channels: [
    {
      channel: "",
      io_state: "yes",
      sql_running: true,
      seconds_behind_source: 0,
      source_host: "127.0.0.1",
      source_port: 3306,
      last_io_error: "",
      last_sql_error: "",
    },
  ],
  problems: {},
};

describe("grantStatements", () => {
  it("grants the global privileges at once and schema ones apart", () => {
    expect(grantStatements(["REPLICATION CLIENT", "SELECT ON performance_schema.*"], "mon'itor")).toBe(
      "GRANT REPLICATION CLIENT ON *.* TO 'mon\\'itor'@'%';\nGRANT SELECT ON performance_schema.* TO 'mon\\'itor'@'%';",
    );
    expect(grantStatements([], "x")).toBeNull();
  });
});

describe("buildConnectionReport", () => {
  it("reports a missing privilege with the GRANT to run", () => {
    const report = buildConnectionReport(base, "lagscope");
    expect(report.ok).toBe(false);
    expect(report.headline).toBe("Connected: mariadb 11.8.3-MariaDB, but 2 privileges are missing.");
    expect(report.privileges).toEqual([
      { name: "REPLICA MONITOR", status: "found" },
      { name: "BINLOG MONITOR", status: "missing" },
      { name: "PROCESS", status: "missing" },
    ]);
    expect(report.grant).toBe("GRANT BINLOG MONITOR, PROCESS ON *.* TO 'lagscope'@'%';");
    expect(report.channels).toEqual([
      { name: "(default channel)", state: "IO yes, SQL running from 127.0.0.1:3306, 0 s behind", problem: false },
    ]);
  });

  it("is ok when nothing is missing", () => {
    const report = buildConnectionReport({ ...base, privileges_missing: [], privileges_excessive: ["SUPER"] }, "m");
    expect(report.ok).toBe(true);
    expect(report.privileges.at(-1)).toEqual({ name: "SUPER", status: "excessive" });
  });
});
