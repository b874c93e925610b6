import { describe, expect, it } from "vitest";
import {
  formatAgo,
  formatBytes,
  formatBytesRate,
  formatClock,
  formatCount,
  formatDateTime,
  formatDuration,
  formatDurationTick,
  formatParamValue,
  formatRate,
  formatTimeTick,
} from "./format";

describe("formatDuration", () => {
  it.each([
    [0.85, "850 ms"],
    [0.0005, "0.50 ms"],
    [0, "0 s"],
    [4.25, "4.25 s"],
    [5, "5 s"],
    [42.34, "42.3 s"],
    [59.96, "60 s"],
    [725, "12 m 5 s"],
    [720, "12 m"],
    [4320, "1 h 12 m"],
    [3600, "1 h"],
    [273_600, "3 d 4 h"],
    [-2.5, "−2.5 s"],
  ])("%s s → %s", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it("shows a missing value as a dash, never 0", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(undefined)).toBe("—");
    expect(formatDuration(Number.NaN)).toBe("—");
  });
});

describe("formatDurationTick", () => {
  it.each([
    [0, "0"],
    [0.5, "500 ms"],
    [30, "30 s"],
    [120, "2 m"],
    [5400, "1.5 h"],
    [172_800, "2 d"],
  ])("%s → %s", (seconds, text) => {
    expect(formatDurationTick(seconds)).toBe(text);
  });
});

describe("counts and rates", () => {
  it.each([
    [950, "950"],
    [1250, "1.25 k"],
    [3_400_000, "3.4 M"],
    [2.5, "2.5"],
    [42.25, "42.3"],
  ])("count %s → %s", (value, text) => {
    expect(formatCount(value)).toBe(text);
  });

  it("formats rates with their unit", () => {
    expect(formatRate(948, "trx")).toBe("948 trx/s");
    expect(formatRate(1200, "trx")).toBe("1.2 k trx/s");
    expect(formatRate(0.5)).toBe("0.5 /s");
    expect(formatRate(null, "trx")).toBe("—");
  });
});

describe("formatBytes", () => {
  it.each([
    [512, "512 B"],
    [1536, "1.5 KiB"],
    [12.3 * 1024 * 1024, "12.3 MiB"],
    [5 * 1024 ** 3, "5 GiB"],
    [-2048, "−2 KiB"],
  ])("%s → %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it("formats byte rates and missing values", () => {
    expect(formatBytesRate(1536)).toBe("1.5 KiB/s");
    expect(formatBytes(null)).toBe("—");
  });
});

describe("times", () => {
  const t = Date.UTC(2026, 10, 23, 10, 42, 7);

  it("formats clock and date in a given zone", () => {
    expect(formatClock(t, "UTC")).toBe("10:42:07");
    expect(formatDateTime(t, "UTC")).toBe("23 Nov 10:42:07");
  });

  it("picks a tick format by span", () => {
    expect(formatTimeTick(t, 5 * 60_000, "UTC")).toBe("10:42:07");
    expect(formatTimeTick(t, 15 * 60_000, "UTC")).toBe("10:42");
    expect(formatTimeTick(t, 6 * 3_600_000, "UTC")).toBe("10:42");
    expect(formatTimeTick(t, 7 * 86_400_000, "UTC")).toBe("23 Nov 10:42");
    expect(formatTimeTick(t, 30 * 86_400_000, "UTC")).toBe("23 Nov");
  });

  it("says how long ago", () => {
    expect(formatAgo(t - 12_000, t)).toBe("12 s ago");
    expect(formatAgo(t - 180_000, t)).toBe("3 m ago");
    expect(formatAgo(null, t)).toBe("never");
  });
});

describe("formatParamValue", () => {
  it("names NULL and empty values", () => {
    expect(formatParamValue(null)).toBe("unset");
    expect(formatParamValue("")).toBe("(empty)");
    expect(formatParamValue("optimistic")).toBe("optimistic");
  });
});
