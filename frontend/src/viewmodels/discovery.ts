// Discovered replicas as rows for Settings → servers: which are already monitored (by the
// source's answer, or by an instance added since), which ports the source did not report, where
// the source's login would go, and the request each "Add" sends — the source's login (only when
// chosen, and only to an address the operator ticked) or a login typed for it.
import type { Schemas } from "../api/client";

type DiscoveryOut = Schemas["DiscoveryOut"];
type Instance = Schemas["InstanceOut"];

export interface ProposalRow {
  key: string;
  host: string;
  /** As the source reports it; null: not reported (never guessed). */
  port: number | null;
  /** host:port as typed in a URL ([v6]:port), or null without a reported port. */
  address: string | null;
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
        (p.port !== null && sameHost(i.host, p.host) && i.port === p.port) ||
        (p.server_id !== null && i.server_id === p.server_id),
    );
    return {
      key: `${p.host}:${p.port ?? ""}:${p.server_id ?? ""}`,
      host: p.host,
      port: p.port,
      address: p.port === null ? null : addressOf(p.host, p.port),
      serverId: p.server_id,
      seenAs: SEEN_AS[p.seen_as] ?? p.seen_as,
      monitoredAs: p.monitored_as ?? now?.name ?? null,
      suggestedName: p.suggested_name,
    };
  });
}

export function addressOf(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function sourceOf(instances: readonly Instance[]): Instance | undefined {
  return instances.find((i) => i.role === "source");
}

/** What the "same login as the source" choice says: whose login would be copied. */
export function sourceLoginLabel(instances: readonly Instance[]): string | null {
  const source = sourceOf(instances);
  if (!source) return null;
  return `Same login as the source (${source.user}${source.has_password ? ", its stored password" : ", no password"})`;
}

/** Where the source's login would go: the addresses ticked, said in one sentence. */
export function sourceLoginDestinations(instances: readonly Instance[], confirmed: readonly string[]): string {
  const user = sourceOf(instances)?.user ?? "";
  const whose = `The source's login (user ${user}${sourceOf(instances)?.has_password ? " and its stored password" : ""})`;
  if (confirmed.length === 0) {
    return `${whose} goes to no replica yet: tick each address you confirm it may be sent to.`;
  }
  return `${whose} will be sent to: ${confirmed.join(", ")} — and nowhere else.`;
}

/** The request one "Add" click sends, or why it cannot be sent yet. ``confirmed``: the
 * addresses ticked as allowed to receive the source's login. */
export function addRequest(
  clusterId: number,
  row: ProposalRow,
  name: string,
  portText: string,
  login: LoginChoice,
  confirmed: readonly string[] = [],
): AddRequest {
  if (!name.trim()) return { kind: "invalid", problem: "Give the instance a name." };
  if (login === null) return { kind: "invalid", problem: "Choose the login to use first." };
  if (login.kind === "source") {
    if (row.port === null || row.address === null) {
      return {
        kind: "invalid",
        problem:
          "The source does not report this replica's port, so its login is not sent there: choose Another login and give the port.",
      };
    }
    if (!confirmed.includes(row.address)) {
      return { kind: "invalid", problem: `Tick ${row.address} first to confirm the source's login may be sent there.` };
    }
    return {
      kind: "source",
      body: {
        name: name.trim(),
        host: row.host,
        port: row.port,
        region: "",
        confirmed: confirmedAddresses(confirmed),
      },
    };
  }
  const port = Number(portText.trim() === "" ? NaN : portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return { kind: "invalid", problem: "The port must be a whole number from 1 to 65535." };
  }
  if (!login.user.trim()) return { kind: "invalid", problem: "Give the user to log in as." };
  return {
    kind: "instance",
    body: {
      name: name.trim(),
      host: row.host,
      port,
      cluster_id: clusterId,
      user: login.user.trim(),
      password: login.password,
      role: "replica",
    },
  };
}

/** "host:port" / "[v6]:port" back to the API's pairs. */
function confirmedAddresses(confirmed: readonly string[]): Schemas["ConfirmedAddress"][] {
  return confirmed.map((address) => {
    const at = address.lastIndexOf(":");
    const host = address.slice(0, at).replace(/^\[(.*)\]$/, "$1");
    return { host, port: Number(address.slice(at + 1)) };
  });
}
