import { describe, expect, it } from "vitest";
import { lagAxisTick } from "./lagTicks";

describe("lagAxisTick", () => {
  it("keeps seconds up to ten minutes, then minutes and hours", () => {
    expect(lagAxisTick(0)).toBe("0");
    expect(lagAxisTick(80)).toBe("80 s");
    expect(lagAxisTick(12.5)).toBe("12.5 s");
    expect(lagAxisTick(0.5)).toBe("500 ms");
    expect(lagAxisTick(900)).toBe("15 m");
    expect(lagAxisTick(7200)).toBe("2 h");
  });
});
