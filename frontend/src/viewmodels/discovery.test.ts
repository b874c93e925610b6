import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { addRequest, discoveryRows, sourceLoginLabel, type ProposalRow } from "./discovery";

const proposal = {
  host: "127.0.0.1",
  port: 40001,
  port_guessed: false,
  server_id: 2,
  server_uuid: null,
  seen_as: "registered" as const,
  monitored_as: null,
  suggested_name: "replica-2",
};

const out: Schemas["DiscoveryOut"] = {
  cluster_id: 1,
  source_instance_id: 1,
  source: "127.0.0.1:40000",
  source_server_id: 1,
  flavor: "mariadb 10.11.19",
  proposals: [
    proposal,
    { ...proposal, port: 40002, server_id: 3, suggested_name: "replica-3", monitored_as: "far" },
    { ...proposal, host: "10.0.0.9", port: 3306, port_guessed: true, server_id: null, seen_as: "dump_session", suggested_name: "replica-10.0.0.9" },
  ],
  problems: [],
};

function instance(over: Partial<Schemas["InstanceOut"]>): Schemas["InstanceOut"] {
  return {
    id: 1,
    cluster_id: 1,
    name: "source",
    host: "127.0.0.1",
    port: 40000,
    user: "monitor",
    has_password: true,
    role: "source",
    region: "",
    enabled: true,
    tls: "preferred",
    tls_ca_path: null,
    server_public_key_path: null,
    flavor: null,
    version: null,
    server_id: 1,
    last_ok_at: null,
    last_error: null,
    ...over,
  } as Schemas["InstanceOut"];
}

describe("discoveryRows", () => {
  it("keeps the API's monitored mark and words the way each was seen", () => {
    const rows = discoveryRows(out, [instance({})]);
    expect(rows.map((r) => [r.port, r.monitoredAs, r.portGuessed])).toEqual([
      [40001, null, false],
      [40002, "far", false],
      [3306, null, true],
    ]);
    expect(rows[2]?.seenAs).toBe("a binlog dump session only");
  });

  it("marks a proposal added since the discovery ran, by address or server id", () => {
    const added = instance({ id: 2, name: "near", role: "replica", port: 40001, server_id: null });
    expect(discoveryRows(out, [instance({}), added])[0]?.monitoredAs).toBe("near");
    const byId = instance({ id: 3, name: "renamed", role: "replica", host: "db2.example", port: 3306, server_id: 2 });
    expect(discoveryRows(out, [byId])[0]?.monitoredAs).toBe("renamed");
  });

  it("never matches a guessed port by address", () => {
    const sameHost = instance({ id: 4, name: "other", role: "replica", host: "10.0.0.9", port: 3306, server_id: 9 });
    expect(discoveryRows(out, [sameHost])[2]?.monitoredAs).toBeNull();
  });
});

describe("addRequest", () => {
  const row = discoveryRows(out, [])[0] as ProposalRow;

  it("sends the source's login only when it was chosen", () => {
    expect(addRequest(1, row, " replica-2 ", "40001", { kind: "source" })).toEqual({
      kind: "source",
      body: { name: "replica-2", host: "127.0.0.1", port: 40001, region: "" },
    });
    expect(addRequest(1, row, "replica-2", "40001", null)).toEqual({
      kind: "invalid",
      problem: "Choose the login to use first.",
    });
  });

  it("sends another login through the ordinary instance creation", () => {
    expect(addRequest(7, row, "r2", "3307", { kind: "other", user: "mon", password: "pw" })).toEqual({
      kind: "instance",
      body: { name: "r2", host: "127.0.0.1", port: 3307, cluster_id: 7, user: "mon", password: "pw", role: "replica" },
    });
    expect(addRequest(7, row, "r2", "3307", { kind: "other", user: " ", password: "" }).kind).toBe("invalid");
  });

  it("refuses a port that is not one and an empty name", () => {
    expect(addRequest(1, row, "r", "70000", { kind: "source" }).kind).toBe("invalid");
    expect(addRequest(1, row, "r", "33.5", { kind: "source" }).kind).toBe("invalid");
    expect(addRequest(1, row, "", "3306", { kind: "source" }).kind).toBe("invalid");
  });
});

describe("sourceLoginLabel", () => {
  it("names the user whose login would be copied, or none without a source", () => {
    expect(sourceLoginLabel([instance({})])).toBe("Same login as the source (monitor, its stored password)");
    expect(sourceLoginLabel([instance({ role: "replica" })])).toBeNull();
  });
});
