import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { addRequest, discoveryRows, sourceLoginDestinations, sourceLoginLabel, type ProposalRow } from "./discovery";

const proposal = {
  host: "127.0.0.1",
  port: 40001 as number | null,
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
    { ...proposal, host: "10.0.0.9", port: null, server_id: null, seen_as: "dump_session", suggested_name: "replica-10.0.0.9" },
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
    expect(rows.map((r) => [r.port, r.monitoredAs, r.address])).toEqual([
      [40001, null, "127.0.0.1:40001"],
      [40002, "far", "127.0.0.1:40002"],
      [null, null, null],
    ]);
    expect(rows[2]?.seenAs).toBe("a binlog dump session only");
  });

  it("marks a proposal added since the discovery ran, by address or server id", () => {
    const added = instance({ id: 2, name: "near", role: "replica", port: 40001, server_id: null });
    expect(discoveryRows(out, [instance({}), added])[0]?.monitoredAs).toBe("near");
    const byId = instance({ id: 3, name: "renamed", role: "replica", host: "db2.example", port: 3306, server_id: 2 });
    expect(discoveryRows(out, [byId])[0]?.monitoredAs).toBe("renamed");
  });

  it("never matches an unreported port by address", () => {
    const sameHost = instance({ id: 4, name: "other", role: "replica", host: "10.0.0.9", port: 3306, server_id: 9 });
    expect(discoveryRows(out, [sameHost])[2]?.monitoredAs).toBeNull();
  });
});

describe("addRequest", () => {
  const row = discoveryRows(out, [])[0] as ProposalRow;

  const unreported = discoveryRows(out, [])[2] as ProposalRow;

  it("sends the source's login only when it was chosen, to an address ticked", () => {
    expect(addRequest(1, row, " replica-2 ", "40001", { kind: "source" }, ["127.0.0.1:40001", "[::1]:3307"])).toEqual({
      kind: "source",
      body: {
        name: "replica-2",
        host: "127.0.0.1",
        port: 40001,
        region: "",
        confirmed: [
          { host: "127.0.0.1", port: 40001 },
          { host: "::1", port: 3307 },
        ],
      },
    });
    expect(addRequest(1, row, "replica-2", "40001", null)).toEqual({
      kind: "invalid",
      problem: "Choose the login to use first.",
    });
    expect(addRequest(1, row, "replica-2", "40001", { kind: "source" }, ["127.0.0.1:40002"])).toEqual({
      kind: "invalid",
      problem: "Tick 127.0.0.1:40001 first to confirm the source's login may be sent there.",
    });
  });

  it("never sends the source's login to a port the source did not report", () => {
    const request = addRequest(1, unreported, "r", "3306", { kind: "source" }, ["10.0.0.9:3306"]);
    expect(request.kind).toBe("invalid");
    expect(addRequest(1, unreported, "r", "", { kind: "other", user: "mon", password: "pw" }).kind).toBe("invalid");
    expect(addRequest(1, unreported, "r", "3310", { kind: "other", user: "mon", password: "pw" })).toMatchObject({
      kind: "instance",
      body: { host: "10.0.0.9", port: 3310 },
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
    const other = { kind: "other" as const, user: "mon", password: "pw" };
    expect(addRequest(1, row, "r", "70000", other).kind).toBe("invalid");
    expect(addRequest(1, row, "r", "33.5", other).kind).toBe("invalid");
    expect(addRequest(1, row, "", "3306", { kind: "source" }, ["127.0.0.1:40001"]).kind).toBe("invalid");
  });
});

describe("sourceLoginLabel", () => {
  it("names the user whose login would be copied, or none without a source", () => {
    expect(sourceLoginLabel([instance({})])).toBe("Same login as the source (monitor, its stored password)");
    expect(sourceLoginLabel([instance({ role: "replica" })])).toBeNull();
  });

  it("says where the source's login will go, and that it goes nowhere until ticked", () => {
    expect(sourceLoginDestinations([instance({})], [])).toBe(
      "The source's login (user monitor and its stored password) goes to no replica yet: tick each address you confirm it may be sent to.",
    );
    expect(sourceLoginDestinations([instance({})], ["127.0.0.1:40001", "db3:3306"])).toBe(
      "The source's login (user monitor and its stored password) will be sent to: 127.0.0.1:40001, db3:3306 — and nowhere else.",
    );
  });
});
