import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { channelOptions, scopeIds } from "./ruleScope";

function channel(id: number, instanceId: number, instance: string, name: string) {
  return { id, instance_id: instanceId, instance, name } as Schemas["ClusterStatusOut"]["channels"][number];
}

describe("channelOptions", () => {
  it("lists every channel of the cluster by instance, the unnamed one named", () => {
    const status = {
      channels: [channel(5, 3, "replica2", ""), channel(7, 2, "replica1", "eu"), channel(4, 2, "replica1", "")],
    } as Schemas["ClusterStatusOut"];
    expect(channelOptions(status)).toEqual([
      { id: 4, instanceId: 2, name: "(default channel)", label: "replica1 · (default channel)" },
      { id: 7, instanceId: 2, name: "eu", label: "replica1 · eu" },
      { id: 5, instanceId: 3, name: "(default channel)", label: "replica2 · (default channel)" },
    ]);
  });
});

describe("scopeIds", () => {
  it("cluster → instance → channel", () => {
    expect(scopeIds("1", "2", "4")).toEqual({ cluster_id: 1, instance_id: 2, channel_id: 4 });
  });

  it("a channel without its instance is not sent", () => {
    expect(scopeIds("1", "", "4")).toEqual({ cluster_id: 1, instance_id: null, channel_id: null });
    expect(scopeIds("", "2", "4")).toEqual({ cluster_id: null, instance_id: 2, channel_id: 4 });
  });
});
