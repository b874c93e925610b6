import { describe, expect, it } from "vitest";
import { liveIndicator } from "./liveIndicator";

describe("liveIndicator", () => {
  it("says each state in words, not only by colour", () => {
    expect(liveIndicator(false, { state: "connected" }).text).toBe("❚❚ fixed range");
    expect(liveIndicator(true, null)).toMatchObject({ text: "◌ live: connecting", tone: "warn" });
    expect(liveIndicator(true, { state: "connected" })).toMatchObject({ text: "● live: streaming", tone: "live" });
    expect(liveIndicator(true, { state: "reconnecting", reason: "connection lost", inMs: 4000 })).toEqual({
      text: "◌ live: reconnecting",
      tone: "warn",
      title: "connection lost; trying again in 4 s (the chart polls meanwhile)",
    });
    expect(liveIndicator(true, { state: "paused" }).text).toBe("❚❚ live: paused while the tab is hidden");
    expect(liveIndicator(true, { state: "ended", reason: "token revoked" })).toMatchObject({
      text: "■ live ended: token revoked",
      tone: "ended",
    });
  });
});
