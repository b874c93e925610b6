// The connection test's answer as a report: what was found, what is missing and the GRANT that
// adds it, what is more than monitoring needs, which replication channels the server has.
import type { Schemas } from "../api/client";
import { formatDuration } from "../format/format";

type TestOut = Schemas["ConnectionTestOut"];

export interface PrivilegeLine {
  name: string;
  status: "found" | "missing" | "excessive";
}

export interface ConnectionReport {
  ok: boolean;
  headline: string;
  facts: { term: string; value: string }[];
  privileges: PrivilegeLine[];
  grant: string | null;
  channels: { name: string; state: string; problem: boolean }[];
  problems: { area: string; text: string }[];
}

function quoted(user: string): string {
  return `'${user.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** The statements that add the missing privileges ('%': the host the account is defined for). */
export function grantStatements(missing: readonly string[], user: string): string | null {
  if (missing.length === 0) return null;
  const account = `${quoted(user)}@'%'`;
  const global = missing.filter((p) => !p.startsWith("SELECT ON "));
  const scoped = missing.filter((p) => p.startsWith("SELECT ON "));
  const lines = [
    ...(global.length ? [`GRANT ${global.join(", ")} ON *.* TO ${account};`] : []),
    ...scoped.map((p) => `GRANT SELECT ON ${p.slice("SELECT ON ".length)} TO ${account};`),
  ];
  return lines.join("\n");
}

export function buildConnectionReport(out: TestOut, user: string): ConnectionReport {
  const missing = out.privileges_missing;
  const problems = Object.entries(out.problems).map(([area, text]) => ({ area, text }));
  const ok = missing.length === 0 && problems.length === 0;
  return {
    ok,
    headline: ok
      ? `Connected: ${out.flavor} ${out.version}, every privilege monitoring needs is there.`
      : missing.length
        ? `Connected: ${out.flavor} ${out.version}, but ${missing.length} privilege${missing.length === 1 ? " is" : "s are"} missing.`
        : `Connected: ${out.flavor} ${out.version}, with problems.`,
    facts: [
      { term: "server", value: out.server },
      { term: "flavor", value: `${out.flavor} ${out.version}` },
      { term: "read only", value: out.read_only ? "yes" : "no" },
    ],
    privileges: [
      ...out.privileges_found.map((name) => ({ name, status: "found" as const })),
      ...missing.map((name) => ({ name, status: "missing" as const })),
      ...out.privileges_excessive.map((name) => ({ name, status: "excessive" as const })),
    ],
    grant: grantStatements(missing, user),
    channels: out.channels.map((c) => {
      const stopped = c.io_state !== "yes" || !c.sql_running;
      const source = c.source_host ? ` from ${c.source_host}:${c.source_port ?? "?"}` : "";
      const lag = c.seconds_behind_source === null ? "lag NULL" : `${formatDuration(c.seconds_behind_source)} behind`;
      const error = c.last_sql_error || c.last_io_error;
      return {
        name: c.channel || "(default channel)",
        state: `IO ${c.io_state}, SQL ${c.sql_running ? "running" : "stopped"}${source}, ${lag}${error ? ` — ${error}` : ""}`,
        problem: stopped || Boolean(error),
      };
    }),
    problems,
  };
}
