import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { channelStatus, instanceStatus } from "../test/statusData";
import { currentCause } from "../test/episodesData";
import {
  buildFleetCards,
  clusterStates,
  filterFleet,
  fleetOptions,
  fleetSearch,
  fleetSparkPoints,
  fleetSummary,
  lagBand,
  parseFleetFilter,
  sortFleet,
  type FleetFilter,
} from "./fleet";

const NOW = Date.parse("2026-11-23T10:00:05Z");
const NO_FILTER: FleetFilter = { q: "", region: "", state: "", cause: "" };
let nextId = 1;

/** A cluster of a source and one replica per lag given (null: no sample yet). */
function cluster(
  name: string,
  lags: (number | null)[],
  over: Partial<Schemas["FleetClusterOut"]> = {},
  channel: Partial<Schemas["ChannelStatusOut"]> = {},
  region = "beijing",
): Schemas["FleetClusterOut"] {
  const id = nextId++;
  const source = instanceStatus({ id: id * 100, name: `${name}-db0`, role: "source", region });
  const replicas = lags.map((_, i) => instanceStatus({ id: id * 100 + i + 1, name: `${name}-db${i + 1}`, region }));
  return {
    id,
    name,
    enabled: true,
    poll_interval_s: 1,
    stale_after_s: 3,
    instances: [source, ...replicas],
    channels: lags.map((lag, i) =>
      channelStatus({
        id: id * 100 + i + 1,
        instance_id: id * 100 + i + 1,
        instance: `${name}-db${i + 1}`,
        lag_s: lag,
        sample_at: lag === null ? null : "2026-11-23T10:00:04Z",
        verdict: lag === null ? null : lag > 5 ? "apply_bound" : "caught_up",
        ...channel,
      }),
    ),
    edges: lags.map((_, i) => ({ channel_id: id * 100 + i + 1, source_id: id * 100, replica_id: id * 100 + i + 1 })),
    ...over,
  };
}

function fleet(...clusters: Schemas["FleetClusterOut"][]): Schemas["FleetStatusOut"] {
  return { generated_at: "2026-11-23T10:00:05Z", clusters };
}

function firing(clusterId: number, phase: "firing" | "pending" = "firing"): Schemas["FiringOut"] {
  return {
    rule_id: 1,
    rule_name: "lag over 30 s",
    severity: "critical",
    cluster_id: clusterId,
    instance_id: 1,
    channel_id: null,
    phase,
    since: "2026-11-23T10:00:00Z",
    value: 42,
  } as Schemas["FiringOut"];
}

describe("lagBand", () => {
  it("groups lags that double, so a wobbling lag keeps its place", () => {
    expect([lagBand(null), lagBand(0), lagBand(0.9), lagBand(1), lagBand(1.9), lagBand(2), lagBand(40), lagBand(42)]).toEqual([
      -1, 0, 0, 1, 1, 2, 6, 6,
    ]);
    expect(lagBand(70)).toBeGreaterThan(lagBand(42));
  });
});

describe("clusterStates", () => {
  it("names every problem, worst first", () => {
    const c = cluster("a", [40, 0.2], {}, {});
    c.instances[2] = { ...c.instances[2]!, reachable: false };
    expect(clusterStates(c, 1)).toEqual(["firing", "unreachable", "behind"]);
  });

  it("is stopped for a stopped or broken channel, ok when caught up, no samples before any", () => {
    expect(clusterStates(cluster("a", [null], {}, { verdict: "broken", sample_at: "2026-11-23T10:00:04Z" }), 0)).toEqual(["stopped"]);
    expect(clusterStates(cluster("b", [0.1, 0.3]), 0)).toEqual(["ok"]);
    expect(clusterStates(cluster("c", [null]), 0)).toEqual(["no_samples"]);
  });

  it("is only disabled for a disabled cluster", () => {
    expect(clusterStates(cluster("d", [40], { enabled: false }), 2)).toEqual(["disabled"]);
  });
});

describe("sortFleet", () => {
  const healthy = cluster("healthy", [0.2]);
  const behindFar = cluster("behind-far", [100]);
  const behindNear = cluster("behind-near", [10]);
  const unreachable = cluster("down", [0.1]);
  unreachable.instances[1] = { ...unreachable.instances[1]!, reachable: false };
  const alerted = cluster("zz-alerted", [0.5]);
  const off = cluster("aa-off", [0.1], { enabled: false });
  const empty = cluster("empty", [null]);

  it("puts problems first (firing, unreachable, behind), then the worst lag, disabled last", () => {
    const cards = sortFleet(
      buildFleetCards(fleet(healthy, off, behindNear, empty, unreachable, behindFar, alerted), undefined, [firing(alerted.id)], NOW),
    );
    expect(cards.map((c) => c.name)).toEqual(["zz-alerted", "down", "behind-far", "behind-near", "healthy", "empty", "aa-off"]);
    expect(cards.map((c) => c.state)).toEqual(["firing", "unreachable", "behind", "behind", "ok", "no_samples", "disabled"]);
  });

  it("does not reorder when lags move within their band, whatever order the clusters arrive in", () => {
    const a = cluster("a", [40]);
    const b = cluster("b", [45]);
    const first = sortFleet(buildFleetCards(fleet(b, a), undefined, [], NOW)).map((c) => c.name);
    const a2 = { ...a, channels: [{ ...a.channels[0]!, lag_s: 50 }] };
    const b2 = { ...b, channels: [{ ...b.channels[0]!, lag_s: 41 }] };
    const second = sortFleet(buildFleetCards(fleet(a2, b2), undefined, [], NOW)).map((c) => c.name);
    expect(first).toEqual(["a", "b"]);
    expect(second).toEqual(first);
  });

  it("moves a cluster whose lag doubles past the others", () => {
    const a = cluster("a", [40]);
    const b = cluster("b", [45]);
    const b2 = { ...b, channels: [{ ...b.channels[0]!, lag_s: 130 }] };
    expect(sortFleet(buildFleetCards(fleet(a, b2), undefined, [], NOW)).map((c) => c.name)).toEqual(["b", "a"]);
  });

  it("counts only firing alerts, not pending ones", () => {
    const c = cluster("p", [0.1]);
    const [card] = buildFleetCards(fleet(c), undefined, [firing(c.id, "pending")], NOW);
    expect([card?.state, card?.firing]).toEqual(["ok", 0]);
  });
});

describe("filters", () => {
  const blocked = cluster("orders", [60], {}, { causes: [currentCause({ cause: "blocked_by_session", words: "blocked by a session on the replica" })] });
  const big = cluster("billing", [30], {}, { causes: [currentCause()] }, "ningxia");
  const calm = cluster("search", [0.1], {}, {}, "ningxia");
  const cards = sortFleet(buildFleetCards(fleet(blocked, big, calm), undefined, [], NOW));
  const names = (filter: Partial<FleetFilter>) => filterFleet(cards, { ...NO_FILTER, ...filter }).map((c) => c.name);

  it("searches cluster and server names, in any case", () => {
    expect(names({ q: "ORD" })).toEqual(["orders"]);
    expect(names({ q: "billing-db1" })).toEqual(["billing"]);
    expect(names({ q: " db0 " })).toHaveLength(3);
    expect(names({ q: "nothing" })).toEqual([]);
  });

  it("filters by region, state and cause, together", () => {
    expect(names({ region: "ningxia" })).toEqual(["billing", "search"]);
    expect(names({ state: "behind" })).toEqual(["orders", "billing"]);
    expect(names({ state: "problem" })).toEqual(["orders", "billing"]);
    expect(names({ state: "ok" })).toEqual(["search"]);
    expect(names({ cause: "large_transaction" })).toEqual(["billing"]);
    expect(names({ region: "ningxia", state: "behind" })).toEqual(["billing"]);
    expect(names({ region: "beijing", cause: "large_transaction" })).toEqual([]);
  });

  it("offers what the fleet has, counted over the whole fleet, and keeps a value from the URL", () => {
    const options = fleetOptions(cards, { ...NO_FILTER, state: "behind", cause: "ddl" });
    expect(options.regions).toEqual([
      { value: "beijing", label: "beijing", count: 1 },
      { value: "ningxia", label: "ningxia", count: 2 },
    ]);
    expect(options.states.map((s) => [s.value, s.count])).toEqual([
      ["problem", 2],
      ["behind", 2],
      ["ok", 1],
    ]);
    expect(options.causes.map((c) => [c.label, c.count])).toEqual([
      ["blocked by a session on the replica", 1],
      ["ddl", 0],
      ["one large transaction", 1],
    ]);
  });

  it("round-trips through the URL, leaving other parameters and empty filters out", () => {
    const url = fleetSearch(new URLSearchParams("x=1&q=old"), { q: "orders", region: "", state: "behind", cause: "" });
    expect(url.toString()).toBe("x=1&q=orders&state=behind");
    expect(parseFleetFilter(url)).toEqual({ q: "orders", region: "", state: "behind", cause: "" });
  });

  it("summarises the fleet in the cards' own problems, then the calm clusters", () => {
    expect(fleetSummary(cards)).toEqual(["2 replica channels behind", "1 cluster all caught up"]);
  });
});

describe("fleetSparkPoints", () => {
  it("puts each value at its bucket's start and keeps nulls as gaps", () => {
    const points = fleetSparkPoints({
      metric: "lag_s",
      start: 1000,
      end: 4000,
      origin: 0,
      bucket_ms: 1000,
      lines: [{ channel_id: 7, values: [null, 1.5, null, 2] }],
    }).get(7);
    expect(points?.map((p) => [p.t, p.value])).toEqual([
      [0, null],
      [1000, 1.5],
      [2000, null],
      [3000, 2],
    ]);
  });
});

describe("buildFleetCards", () => {
  it("draws each replica's sparkline and nests the topology from the edges", () => {
    const c = cluster("orders", [0.5, 0.7]);
    const sparks = { metric: "lag_s" as const, start: 0, end: 2000, origin: 0, bucket_ms: 1000, lines: [{ channel_id: c.channels[1]!.id, values: [1, 2] }] };
    const [card] = buildFleetCards(fleet(c), sparks, [], NOW);
    expect(card?.roots.map((n) => n.name)).toEqual(["orders-db0"]);
    const replicas = card?.roots[0]?.children ?? [];
    expect(replicas.map((n) => n.name)).toEqual(["orders-db1", "orders-db2"]);
    expect(replicas[1]?.channels[0]?.spark.map((p) => p.value)).toEqual([1, 2]);
    expect(card?.generatedAt).toBe("2026-11-23T10:00:05Z");
    expect([card?.servers, card?.regions, card?.worstLagS]).toEqual([3, ["beijing"], 0.7]);
  });
});

describe("fleetSummary", () => {
  it("counts what the cards count: one cluster with two replicas behind is two problems", () => {
    // The demo in phase B: "1 cluster: 1 replica behind" sat above "2 problems in 2 replica channels".
    const [card] = buildFleetCards(fleet(cluster("demo", [41, 39])), undefined, [], NOW);
    expect(card?.summary).toBe("2 problems in 2 replica channels");
    expect(fleetSummary(card ? [card] : [])).toEqual(["2 replica channels behind"]);
  });

  it("sums to the cards' problems for any mix, and names firing alerts and calm clusters apart", () => {
    const stopped = cluster("s", [0.1, 50], {}, {});
    stopped.channels[0] = { ...stopped.channels[0]!, verdict: "stopped" };
    const split = cluster("d", [0.2], {}, { disagreement: true, seconds_behind_source: 0, heartbeat_lag_s: 9 });
    const errant = cluster("e", [0.1], {}, { errant_trx: 2 });
    const lost = cluster("u", [0.1]);
    lost.instances[0] = { ...lost.instances[0]!, reachable: false };
    const calm = cluster("c", [0.1]);
    const empty = cluster("n", [null]);
    const off = cluster("x", [0.1], { enabled: false });
    const alerts = [firing(calm.id), firing(calm.id)];
    const cards = buildFleetCards(fleet(stopped, split, errant, lost, calm, empty, off), undefined, alerts, NOW);
    expect(fleetSummary(cards)).toEqual([
      "1 replica channel stopped or broken",
      "1 replica channel behind",
      "1 replica channel with errant transactions",
      "1 replica channel whose lag sources disagree",
      "1 source unreachable or stale",
      "2 alerts firing",
      "1 cluster with no samples yet",
      "1 cluster disabled",
    ]);
    const counted = fleetSummary(cards)
      .slice(0, 5)
      .reduce((sum, part) => sum + Number(part.split(" ")[0]), 0);
    expect(counted).toBe(cards.reduce((sum, c) => sum + c.problems, 0));
  });
});
