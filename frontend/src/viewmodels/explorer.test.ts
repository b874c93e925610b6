import { describe, expect, it } from "vitest";
import { annotationScopes, buildExplorerChannels, liveIntervalMs, scopeIds, scopeOf } from "./explorer";
import { channelStatus, clusterOut } from "../test/statusData";

describe("explorer pieces", () => {
  it("lists channels with colour and region", () => {
    const channels = [channelStatus({ id: 5, instance_id: 3, instance: "replica2" })];
    expect(buildExplorerChannels(clusterOut(), channels, new Map([[5, "#abc"]]))).toEqual([
      { id: 5, label: "replica2", color: "#abc", region: "far" },
    ]);
  });

  it("maps scopes both ways", () => {
    const scopes = annotationScopes(clusterOut(), [channelStatus({ id: 5 })]);
    expect(scopes.map((s) => s.value)).toEqual(["cluster", "i1", "i2", "i3", "c5"]);
    expect(scopeIds("i2")).toEqual({ instance_id: 2, channel_id: null });
    expect(scopeIds("c5")).toEqual({ instance_id: null, channel_id: 5 });
    expect(scopeIds("cluster")).toEqual({ instance_id: null, channel_id: null });
    expect(scopeOf({ instance_id: null, channel_id: 5 })).toBe("c5");
  });

  it("refreshes long ranges less often", () => {
    expect(liveIntervalMs(900_000)).toBe(2000);
    expect(liveIntervalMs(6 * 3_600_000)).toBe(10_000);
    expect(liveIntervalMs(7 * 86_400_000)).toBe(60_000);
  });
});
