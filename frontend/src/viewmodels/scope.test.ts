import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { clusterOut, instanceOut } from "../test/statusData";
import {
  channelCluster,
  channelOptions,
  EVERYWHERE,
  scopeBody,
  scopeInstances,
  scopeText,
  scopeValues,
  withCluster,
  withInstance,
} from "./scope";

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

describe("scopeBody", () => {
  const scope = (clusterId: string, instanceId: string, channelId: string, region = "") => ({
    clusterId,
    instanceId,
    channelId,
    region,
  });

  it("cluster → instance → channel", () => {
    expect(scopeBody(scope("1", "2", "4"))).toEqual({ cluster_id: 1, instance_id: 2, channel_id: 4, region: null });
  });

  it("a channel without its instance is not sent", () => {
    expect(scopeBody(scope("1", "", "4"))).toEqual({ cluster_id: 1, instance_id: null, channel_id: null, region: null });
    expect(scopeBody(scope("", "2", "4"))).toEqual({ cluster_id: null, instance_id: 2, channel_id: 4, region: null });
  });

  it("a blank region is none, a typed one is trimmed", () => {
    expect(scopeBody({ ...EVERYWHERE, region: "  " }).region).toBeNull();
    expect(scopeBody({ ...EVERYWHERE, region: " far " }).region).toBe("far");
  });

  it("reads a stored scope back", () => {
    const values = scopeValues({ cluster_id: 1, instance_id: 2, channel_id: null, region: null });
    expect(values).toEqual(scope("1", "2", ""));
    expect(scopeBody(values)).toEqual({ cluster_id: 1, instance_id: 2, channel_id: null, region: null });
  });
});

describe("choosing a scope", () => {
  const clusters = [
    clusterOut(),
    clusterOut({ id: 9, name: "other", instances: [instanceOut({ id: 20, cluster_id: 9, name: "far1" })] }),
  ];

  it("a new cluster or instance clears what was under it", () => {
    const chosen = { clusterId: "1", instanceId: "2", channelId: "4", region: "far" };
    expect(withCluster(chosen, "9")).toEqual({ clusterId: "9", instanceId: "", channelId: "", region: "far" });
    expect(withInstance(chosen, "3")).toEqual({ clusterId: "1", instanceId: "3", channelId: "", region: "far" });
  });

  it("lists the chosen cluster's instances, or every cluster's", () => {
    expect(scopeInstances({ ...EVERYWHERE, clusterId: "9" }, clusters).map((i) => i.name)).toEqual(["far1"]);
    expect(scopeInstances(EVERYWHERE, clusters)).toHaveLength(4);
  });

  it("lists the channels of the chosen cluster, or of the chosen instance's", () => {
    expect(channelCluster({ ...EVERYWHERE, clusterId: "1" }, clusters)).toBe(1);
    expect(channelCluster({ ...EVERYWHERE, instanceId: "20" }, clusters)).toBe(9);
    expect(channelCluster(EVERYWHERE, clusters)).toBeNull();
  });
});

describe("scopeText", () => {
  it("names what a silence covers", () => {
    const clusters = [clusterOut({ name: "lab" })];
    const none = { cluster_id: null, instance_id: null, channel_id: null, region: null };
    expect(scopeText(none, clusters)).toBe("everything");
    expect(scopeText({ ...none, cluster_id: 1, instance_id: 2, channel_id: 4 }, clusters)).toBe("lab · replica1 · channel #4");
    expect(scopeText({ ...none, cluster_id: 7, region: "far" }, clusters)).toBe("cluster #7 · region far");
  });
});
