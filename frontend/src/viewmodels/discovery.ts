// Discovered replicas as rows for Settings → servers: which are already monitored (by the
// source's answer, or by an instance added since), which ports are guesses, and the request
// each "Add" sends — the source's login (only when chosen) or a login typed for it.
import type { Schemas } from "../api/client";

type DiscoveryOut = Schemas["DiscoveryOut"];
type Instance = Schemas["InstanceOut"];

export interface ProposalRow {
  key: string;
  host: string;
  port: number;
  portGuessed: boolean;
  serverId: number | null;
  seenAs: string;
  monitoredAs: string | null;
  suggestedName: string;
}

export type LoginChoice = { kind: "source" } | { kind: "other"; user: string; password: string } | null;

export type AddRequest =
  | { kind: "source"; body: Schemas["DiscoveredReplicaIn"] }
  | { kind: "instance"; body: Schemas["InstanceIn"] }
  | { kind: "invalid"; problem: string };

const SEEN_AS: Record<string, string> = {
  registered: "registered with the source",
  dump_session: "a binlog dump session only",
};

function sameHost(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** The proposals, each marked with the instance that already is it (the API's answer, or an
 * instance with its address or server id added since the discovery ran). */
export function discoveryRows(out: DiscoveryOut, instances: readonly Instance[]): ProposalRow[] {
  return out.proposals.map((p) => {
    const now = instances.find(
      (i) =>
        (!p.port_guessed && sameHost(i.host, p.host) && i.port === p.port) ||
        (p.server_id !== null && i.server_id === p.server_id),
    );
    return {
      key: `${p.host}:${p.port}:${p.server_id ?? ""}`,
      host: p.host,
      port: p.port,
      portGuessed: p.port_guessed,
      serverId: p.server_id,
      seenAs: SEEN_AS[p.seen_as] ?? p.seen_as,
      monitoredAs: p.monitored_as ?? now?.name ?? null,
      suggestedName: p.suggested_name,
    };
  });
}

/** What the "same login as the source" choice says: whose login would be copied. */
export function sourceLoginLabel(instances: readonly Instance[]): string | null {
  const source = instances.find((i) => i.role === "source");
  if (!source) return null;
  return `Same login as the source (${source.user}${source.has_password ? ", its stored password" : ", no password"})`;
}

/** The request one "Add" click sends, or why it cannot be sent yet. */
export function addRequest(
  clusterId: number,
  row: ProposalRow,
  name: string,
  portText: string,
  login: LoginChoice,
): AddRequest {
  const port = Number(portText);
  if (!name.trim()) return { kind: "invalid", problem: "Give the instance a name." };
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return { kind: "invalid", problem: "The port must be a whole number from 1 to 65535." };
  }
  if (login === null) return { kind: "invalid", problem: "Choose the login to use first." };
  const where = { name: name.trim(), host: row.host, port };
  if (login.kind === "source") return { kind: "source", body: { ...where, region: "" } };
  if (!login.user.trim()) return { kind: "invalid", problem: "Give the user to log in as." };
  return {
    kind: "instance",
    body: { ...where, cluster_id: clusterId, user: login.user.trim(), password: login.password, role: "replica" },
  };
}
