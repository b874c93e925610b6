import { describe, expect, it } from "vitest";
import { exportFileName, replicasPart, safeFilePart, utcMinute, utcRange } from "./fileName";

const AT = Date.parse("2026-12-06T03:12:45.500Z");

describe("utcMinute and utcRange", () => {
  it("write UTC to the minute without colons", () => {
    expect(utcMinute(AT)).toBe("2026-12-06T0312Z");
    expect(utcMinute(Date.parse("2026-01-02T23:59:59.999Z"))).toBe("2026-01-02T2359Z");
  });

  it("cover the range: start rounded down, end rounded up, a whole minute kept", () => {
    expect(utcRange(AT, Date.parse("2026-12-06T03:41:10Z"))).toBe("2026-12-06T0312Z–2026-12-06T0342Z");
    expect(utcRange(Date.parse("2026-12-06T03:12:00Z"), Date.parse("2026-12-06T03:42:00Z"))).toBe(
      "2026-12-06T0312Z–2026-12-06T0342Z",
    );
    // Across midnight, and a range inside one minute.
    expect(utcRange(Date.parse("2026-12-31T23:58:00Z"), Date.parse("2027-01-01T00:01:30Z"))).toBe(
      "2026-12-31T2358Z–2027-01-01T0002Z",
    );
    expect(utcRange(AT, AT + 5_000)).toBe("2026-12-06T0312Z–2026-12-06T0313Z");
  });
});

describe("safeFilePart", () => {
  it("keeps a plain name", () => {
    expect(safeFilePart("replica1")).toBe("replica1");
    expect(safeFilePart("db-eu_west.2")).toBe("db-eu_west.2");
  });

  it("makes a hostile name harmless", () => {
    expect(safeFilePart("<img src=x onerror=alert(1)>")).toBe("img-src-x-onerror-alert-1");
    expect(safeFilePart("../../etc/passwd")).toBe("etc-passwd");
    expect(safeFilePart("C:\\Windows\\system32")).toBe("C-Windows-system32");
    expect(safeFilePart('a:b*c?d"e<f>g|h')).toBe("a-b-c-d-e-f-g-h");
    expect(safeFilePart(".hidden")).toBe("hidden");
    expect(safeFilePart("line\nbreak\u0000nul")).toBe("line-break-nul");
  });

  it("drops accents and writes other scripts as a dash, never nothing", () => {
    expect(safeFilePart("réplica-Ünïcode")).toBe("replica-Unicode");
    expect(safeFilePart("реплика")).toBe("unnamed");
    expect(safeFilePart("   ")).toBe("unnamed");
    expect(safeFilePart("")).toBe("unnamed");
  });

  it("bounds the length", () => {
    expect(safeFilePart("x".repeat(500))).toHaveLength(40);
    expect(safeFilePart("ab".repeat(30), 10)).toBe("ababababab");
  });
});

describe("replicasPart", () => {
  it("joins up to three, each once, and counts the rest", () => {
    expect(replicasPart(["replica1"])).toBe("replica1");
    expect(replicasPart(["replica1", "replica2", "replica1"])).toBe("replica1+replica2");
    expect(replicasPart(["a", "b", "c", "d", "e"])).toBe("a+b+c+2-more");
    expect(replicasPart([])).toBe("no-replica");
  });
});

describe("exportFileName", () => {
  it("names what, cluster, replicas and the UTC range", () => {
    expect(
      exportFileName({
        what: "episode-12",
        cluster: "lab",
        replicas: ["replica1"],
        fromMs: AT,
        toMs: Date.parse("2026-12-06T03:42:00Z"),
        ext: "md",
      }),
    ).toBe("lagscope-episode-12-lab-replica1-2026-12-06T0312Z–2026-12-06T0342Z.md");
  });

  it("stays one safe, bounded file name whatever the names", () => {
    const name = exportFileName({
      what: "lag",
      cluster: "prod/eu: <b>main</b>",
      replicas: ["<img src=x onerror=alert(1)>", "r2 ", "x".repeat(300), "r4", "r5"],
      fromMs: AT,
      toMs: AT + 3_600_000,
      ext: "png",
    });
    expect(name).toBe(
      `lagscope-lag-prod-eu-b-main-b-img-src-x-onerror-alert-1+r2+${"x".repeat(32)}+2-more-2026-12-06T0312Z–2026-12-06T0413Z.png`,
    );
    expect(name).not.toMatch(/[/\\:*?"<>|\s]/);
    expect(name.length).toBeLessThan(255);
  });

  it("stays under 255 bytes with the longest names", () => {
    const long = "n".repeat(300);
    const name = exportFileName({
      what: "episode-999999999",
      cluster: long,
      replicas: [`1${long}`, `2${long}`, `3${long}`, ...Array.from({ length: 200 }, (_, i) => `r${i}`)],
      fromMs: AT,
      toMs: AT + 1,
      ext: "html",
    });
    expect(new TextEncoder().encode(name).length).toBeLessThanOrEqual(255);
  });
});
