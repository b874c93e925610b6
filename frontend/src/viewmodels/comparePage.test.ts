import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { FAR, NEAR, stats } from "../test/journalData";
import { channelStatus, instanceStatus } from "../test/statusData";
import type { CompareOut } from "./compare";
import { channelsModeQuery, comparePageModel, comparePicks, windowsModeQuery, type ComparePageData } from "./comparePage";
import { parseCompareQuery, type CompareQuery } from "./compareQuery";

const T0 = Date.parse("2026-11-23T10:00:00Z");
const HOUR = 3_600_000;

// replica1 and replica2 near, replica3 far: the default pair is replica1 against replica3.
function status(over: Partial<Schemas["ClusterStatusOut"]> = {}): Schemas["ClusterStatusOut"] {
  return {
    id: 1,
    name: "demo",
    generated_at: "2026-11-23T10:00:00Z",
    poll_interval_s: 1,
    stale_after_s: 5,
    channels: [
      channelStatus({ id: 1, instance_id: 2, instance: "replica1" }),
      channelStatus({ id: 2, instance_id: 3, instance: "replica2" }),
      channelStatus({ id: 3, instance_id: 4, instance: "replica3", name: "main" }),
    ],
    instances: [
      instanceStatus({ id: 2, name: "replica1", region: "near" }),
      instanceStatus({ id: 3, name: "replica2", region: "near" }),
      instanceStatus({ id: 4, name: "replica3", region: "far" }),
    ],
    ...over,
  };
}

const query = (search: string): CompareQuery => parseCompareQuery(new URLSearchParams(search));

function backlog(): Schemas["BacklogOut"] {
  return {
    samples: 60,
    not_received_mean: 2,
    not_received_p95: 5,
    received_not_applied_mean: 1,
    received_not_applied_p95: 3,
    dominant: "not_received",
  };
}

const compared: CompareOut = {
  mode: "channels",
  a: { channel: NEAR, window: { start: "2026-11-23T09:00:00.000Z", end: "2026-11-23T10:00:00.000Z" }, stats: stats(), backlog: backlog() },
  b: { channel: FAR, window: { start: "2026-11-23T09:00:00.000Z", end: "2026-11-23T10:00:00.000Z" }, stats: stats(), backlog: backlog() },
  conclusion: "replica2 (far) lags more than replica1 (near)",
  impact: null,
  lagging: "b",
  cause: "not_received",
};

function data(q: CompareQuery, over: Partial<ComparePageData> = {}): ComparePageData {
  const s = "status" in over ? over.status : status();
  return { clusterId: 1, query: q, status: s, picks: comparePicks(s, q, T0), compare: undefined, series: {}, ...over };
}

describe("comparePicks", () => {
  it("picks the first replica and another region's for two replicas over the last hour", () => {
    const picks = comparePicks(status(), query(""), T0);
    expect([picks.first?.id, picks.other?.id]).toEqual([1, 3]);
    expect(picks.request).toEqual({ mode: "channels", channelId: 1, otherId: 3, span: { startMs: T0 - HOUR, endMs: T0 } });
    expect(picks.series).toEqual([
      { channelId: 1, span: { startMs: T0 - HOUR, endMs: T0 } },
      { channelId: 3, span: { startMs: T0 - HOUR, endMs: T0 } },
    ]);
  });

  it("keeps the URL's replicas, and never compares a replica with itself", () => {
    expect(comparePicks(status(), query("?channel=2&other=1"), T0).request).toMatchObject({ channelId: 2, otherId: 1 });
    expect(comparePicks(status(), query("?channel=3&other=3"), T0).request).toMatchObject({ channelId: 3, otherId: 1 });
  });

  it("takes any other replica when all are in one region", () => {
    const one = status({ instances: [instanceStatus({ id: 2 }), instanceStatus({ id: 3 }), instanceStatus({ id: 4 })] });
    expect(comparePicks(one, query(""), T0).other?.id).toBe(2);
  });

  it("asks one replica's two windows in windows mode", () => {
    const q = windowsModeQuery(comparePicks(status(), query("?channel=2"), T0), T0);
    const picks = comparePicks(status(), q, T0);
    expect(picks.other).toBeUndefined();
    expect(picks.request).toEqual({
      mode: "windows",
      channelId: 2,
      a: { startMs: T0 - 2 * HOUR, endMs: T0 - HOUR },
      b: { startMs: T0 - HOUR, endMs: T0 },
    });
    expect(picks.series.map((s) => s.channelId)).toEqual([2, 2]);
  });

  it("asks nothing before the status or with a single replica", () => {
    expect(comparePicks(undefined, query(""), T0)).toEqual({ first: undefined, other: undefined, request: null, series: [] });
    const single = status({ channels: [channelStatus()] });
    expect(comparePicks(single, query(""), T0).request).toBeNull();
  });

  it("goes back to two replicas over the last hour with the current pair", () => {
    const picks = comparePicks(status(), query("?channel=2"), T0);
    expect(channelsModeQuery(picks)).toEqual({ mode: "channels", channelId: 2, otherId: 3, range: "1h", span: null });
  });
});

describe("comparePageModel", () => {
  it("names the choices with their regions and leaves the first out of replica b's", () => {
    const view = comparePageModel(data(query("")));
    expect(view.clusterName).toBe("demo");
    expect(view.options).toEqual([
      { id: 1, name: "replica1 (near)" },
      { id: 2, name: "replica2 (near)" },
      { id: 3, name: "replica3 · main (far)" },
    ]);
    expect(view.otherOptions.map((o) => o.id)).toEqual([2, 3]);
    expect([view.noChannels, view.onlyOne, view.model]).toEqual([false, false, null]);
  });

  it("says when there is no channel, or only one to compare", () => {
    expect(comparePageModel(data(query(""), { status: status({ channels: [] }) })).noChannels).toBe(true);
    expect(comparePageModel(data(query(""), { status: status({ channels: [channelStatus()] }) })).onlyOne).toBe(true);
    const before = comparePageModel(data(query(""), { status: undefined }));
    expect([before.clusterName, before.noChannels, before.onlyOne]).toEqual(["cluster 1", false, false]);
  });

  it("builds the comparison once answered", () => {
    const view = comparePageModel(data(query(""), { compare: compared }));
    expect(view.model?.sides.map((s) => s.key)).toEqual(["a", "b"]);
    expect(view.model?.sentence).toBeTruthy();
  });
});
