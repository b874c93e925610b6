import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { clusterCreate, clusterFormValues, clusterPatch } from "./clusterForm";

const stored: Schemas["ClusterOut"] = {
  id: 3,
  name: "orders",
  poll_interval_s: 1,
  extra_params: [],
  heartbeat: {
    mode: "pt-heartbeat",
    schema_name: "percona",
    table: "hb_custom",
    interval_s: 1,
    user: null,
    has_password: false,
  },
  enabled: true,
  created_at: "2026-11-23T10:00:00Z",
  instances: [],
};

describe("clusterPatch", () => {
  it("sends nothing for an untouched form (no heartbeat defaults)", () => {
    expect(clusterPatch(stored, clusterFormValues(stored))).toEqual({});
  });

  it("a new poll interval leaves the custom heartbeat table alone", () => {
    expect(clusterPatch(stored, { ...clusterFormValues(stored), pollIntervalS: "2" })).toEqual({ poll_interval_s: 2 });
  });

  it("sends only the heartbeat fields that changed", () => {
    const edited = { ...clusterFormValues(stored), table: " hb_other ", intervalS: "0.5" };
    expect(clusterPatch(stored, edited)).toEqual({ heartbeat: { table: "hb_other", interval_s: 0.5 } });
    expect(clusterPatch(stored, { ...clusterFormValues(stored), mode: "off" })).toEqual({ heartbeat: { mode: "off" } });
  });

  it("the writer's login: a new user and a typed password are sent, an empty user is not", () => {
    const writer = { ...stored, heartbeat: { ...stored.heartbeat, mode: "lagscope" as const, user: "hb" } };
    expect(clusterPatch(writer, { ...clusterFormValues(writer), user: "" })).toEqual({});
    expect(clusterPatch(writer, { ...clusterFormValues(writer), user: "hb2", password: "pw" })).toEqual({
      heartbeat: { user: "hb2", password: "pw" },
    });
  });
});

describe("clusterCreate", () => {
  it("sends the heartbeat in full, with the API's defaults for a new cluster", () => {
    expect(clusterCreate({ ...clusterFormValues(), name: "new" })).toEqual({
      name: "new",
      poll_interval_s: 1,
      heartbeat: { mode: "off", schema_name: "lagscope", table: "heartbeat", interval_s: 0.25 },
    });
  });
});
