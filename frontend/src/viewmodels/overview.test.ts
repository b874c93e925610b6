import { describe, expect, it } from "vitest";
import { buildClusterCard, disagreementText, sortCards } from "./overview";
import { channelStatus, clusterOut, edge, instanceStatus, node } from "../test/statusData";
import { currentCause } from "../test/episodesData";

const NOW = Date.parse("2026-11-23T10:00:05Z");

function status(channels = [channelStatus()], instances = [instanceStatus()]) {
  return {
    id: 1,
    name: "demo",
    poll_interval_s: 1,
    stale_after_s: 3,
    generated_at: "2026-11-23T10:00:05Z",
    instances: [instanceStatus({ id: 1, name: "source", role: "source" }), ...instances],
    channels,
  };
}

const topology = {
  cluster_id: 1,
  nodes: [
    node(),
    node({ id: 2, name: "replica1", role: "replica" }),
    node({ id: 3, name: "replica2", role: "replica", region: "far" }),
    node({ id: 4, name: "replica3", role: "replica", region: "far" }),
  ],
  edges: [
    edge(),
    edge({ channel_id: 2, replica_id: 3 }),
    edge({ channel_id: 3, source_id: 3, replica_id: 4 }),
  ],
};

describe("disagreementText", () => {
  it("quotes the server against the heartbeat", () => {
    const c = channelStatus({ disagreement: true, seconds_behind_source: 0, heartbeat_lag_s: 42 });
    expect(disagreementText(c)).toBe("server says 0 s, heartbeat says 42 s");
  });

  it("is null when the sources agree", () => {
    expect(disagreementText(channelStatus())).toBeNull();
  });
});

describe("buildClusterCard", () => {
  it("nests chained replicas under their source", () => {
    const card = buildClusterCard(clusterOut(), status(), topology, undefined, NOW);
    expect(card.roots.map((n) => n.name)).toEqual(["source"]);
    const [source] = card.roots;
    expect(source?.children.map((n) => n.name).sort()).toEqual(["replica1", "replica2"]);
    const far = source?.children.find((n) => n.name === "replica2");
    expect(far?.children.map((n) => n.name)).toEqual(["replica3"]);
  });

  it("shows lag with its source and the verdict in words", () => {
    const card = buildClusterCard(clusterOut(), status(), topology, undefined, NOW);
    const row = card.roots[0]?.children.find((n) => n.name === "replica1")?.channels[0];
    expect(row?.lagText).toBe("200 ms");
    expect(row?.lagSourceText).toBe("heartbeat");
    expect(row?.verdict.label).toBe("caught up");
    expect(card.summary).toBe("1 replica channel, all caught up");
  });

  it("shows a lagging replica's current cause in words, its sentence on hover, and its episode", () => {
    const lagging = { ...channelStatus({ verdict: "apply_bound", lag_s: 340 }), causes: [currentCause()], episode_id: 11 };
    const card = buildClusterCard(clusterOut(), status([lagging]), topology, undefined, NOW);
    const row = card.roots[0]?.children.find((n) => n.name === "replica1")?.channels[0];
    expect(row?.cause?.words).toBe("one large transaction");
    expect(row?.cause?.title).toContain("Applying one transaction (GTID 0-1-99) for 340 s");
    expect(row?.episodeHref).toBe("/clusters/1/episodes/11");
  });

  it("shows no cause for a caught-up replica or a status without causes", () => {
    const card = buildClusterCard(clusterOut(), status(), topology, undefined, NOW);
    const row = card.roots[0]?.children.find((n) => n.name === "replica1")?.channels[0];
    expect(row?.cause).toBeNull();
    expect(row?.episodeHref).toBeNull();
  });

  it("marks stopped, stale and unreachable, and counts them as problems", () => {
    const channels = [
      channelStatus({ verdict: "stopped", lag_s: null, sql_running: false }),
      channelStatus({ id: 2, instance_id: 3, instance: "replica2", stale: true }),
    ];
    const instances = [
      instanceStatus(),
      instanceStatus({ id: 3, name: "replica2", reachable: false, last_error: "timed out" }),
    ];
    const card = buildClusterCard(clusterOut(), status(channels, instances), topology, undefined, NOW);
    const [r1, r2] = ["replica1", "replica2"].map((name) =>
      card.roots[0]?.children.find((n) => n.name === name),
    );
    expect(r1?.channels[0]?.lagText).toBe("no lag value");
    expect(r1?.channels[0]?.verdict.label).toBe("stopped");
    expect(r2?.problem).toBe("unreachable: timed out");
    expect(r2?.channels[0]?.verdict.label).toBe("caught up (stale)");
    expect(card.worst.label).toBe("stopped");
    expect(card.problems).toBe(2);
    // problems first among siblings
    expect(card.roots[0]?.children[0]?.name).toBe("replica2"); // unreachable before stopped
  });

  it("says when there are no samples yet", () => {
    const card = buildClusterCard(clusterOut(), status([]), undefined, undefined, NOW);
    expect(card.noSamples).toBe(true);
    expect(card.summary).toBe("no samples yet");
  });

  it("draws the sparkline with gaps", () => {
    const series = {
      metric: "lag_s" as const,
      start: NOW - 900_000,
      end: NOW,
      series: [
        {
          channel_id: 1,
          instance_id: 2,
          metric: "lag_s" as const,
          resolution: "raw" as const,
          bucket_ms: 15_000,
          note: null,
          points: [
            { t: NOW - 900_000, min: 1, avg: 1, max: 1, last: 1, n: 15 },
            { t: NOW - 885_000, min: 2, avg: 2, max: 2, last: 2, n: 15 },
          ],
        },
      ],
    };
    const card = buildClusterCard(clusterOut(), status(), topology, series, NOW);
    const spark = card.roots[0]?.children.find((n) => n.name === "replica1")?.channels[0]?.spark;
    expect(spark?.map((p) => p.value)).toEqual([1, 2, null]);
  });
});

describe("sortCards", () => {
  it("puts problems first", () => {
    const ok = buildClusterCard(clusterOut({ name: "a" }), status(), topology, undefined, NOW);
    const bad = buildClusterCard(
      clusterOut({ id: 2, name: "z" }),
      status([channelStatus({ verdict: "broken" })]),
      topology,
      undefined,
      NOW,
    );
    expect(sortCards([ok, bad]).map((c) => c.name)).toEqual(["z", "a"]);
  });
});

describe("errant transactions on the card", () => {
  it("count as a problem, with the set and what to do on hover", () => {
    const problem = "replica1 has 3 transactions the source never wrote: 77-3-3 (the newest per domain) — …";
    const errant = channelStatus({ errant_trx: 3, errant_gtids: "77-3-3", errant_problem: problem });
    const card = buildClusterCard(clusterOut(), status([errant]), topology, undefined, NOW);
    const row = card.roots[0]?.children.find((n) => n.name === "replica1")?.channels[0];
    expect(row?.errant).toEqual({ text: "3 errant transactions", title: problem });
    expect(card.summary).toBe("1 problem in 1 replica channel");
  });

  it("are not shown when there are none or the count is unknown", () => {
    for (const over of [{ errant_trx: 0, errant_gtids: "" }, { errant_trx: null }, {}]) {
      const card = buildClusterCard(clusterOut(), status([channelStatus(over)]), topology, undefined, NOW);
      expect(card.roots[0]?.children.find((n) => n.name === "replica1")?.channels[0]?.errant).toBeNull();
      expect(card.summary).toBe("1 replica channel, all caught up");
    }
  });
});
