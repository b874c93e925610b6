import { describe, expect, it } from "vitest";
import { clusterIdOf } from "./prefetch";

describe("clusterIdOf", () => {
  it("finds the cluster of the explorer and its sub-pages", () => {
    expect(clusterIdOf("/clusters/12")).toBe(12);
    expect(clusterIdOf("/clusters/12/")).toBe(12);
    expect(clusterIdOf("/clusters/7/episodes/3")).toBe(7);
  });

  it("is null elsewhere and for ids that are not ids", () => {
    expect(clusterIdOf("/")).toBeNull();
    expect(clusterIdOf("/settings")).toBeNull();
    expect(clusterIdOf("/clusters/abc")).toBeNull();
    expect(clusterIdOf("/clusters/0")).toBeNull();
    expect(clusterIdOf("/clusters/99999999999999999999")).toBeNull();
  });
});
