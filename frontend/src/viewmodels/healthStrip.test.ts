import { describe, expect, it } from "vitest";
import { API_UNREACHABLE, buildHealthStrip, type Readiness } from "./healthStrip";

type Part = Readiness["components"][number];

function readiness(...parts: [Part["name"], Part["state"], string][]): Readiness {
  const worst = parts.some(([, s]) => s === "down") ? "down" : parts.some(([, s]) => s === "warn") ? "warn" : "ok";
  return {
    state: worst,
    checked_at: "2026-11-27T10:40:07.006Z",
    components: parts.map(([name, state, message]) => ({ name, state, message, age_s: null, count: null })),
  };
}

const allOk = readiness(
  ["store", "ok", "The store answers."],
  ["broker", "ok", "The broker answers."],
  ["workers", "ok", "2 workers running."],
  ["polling", "ok", "Polled 2 s ago."],
);

describe("buildHealthStrip", () => {
  it("shows nothing before the first answer", () => {
    expect(buildHealthStrip(undefined, false)).toBeNull();
  });

  it("shows nothing at all while every part is ok", () => {
    expect(buildHealthStrip(allOk, false)).toBeNull();
    expect(buildHealthStrip(readiness(), false)).toBeNull();
  });

  it("lists the parts down before the parts that warn, each with its sentence", () => {
    const strip = buildHealthStrip(
      readiness(
        ["store", "ok", "The store answers."],
        ["broker", "warn", "412 tasks wait in the broker's queue: the workers do not keep up."],
        ["workers", "down", "No worker has reported for 42 s."],
        ["beat", "ok", "Beat is dispatching polls."],
        ["polling", "down", "No worker has polled for 42 s."],
        ["heartbeat", "warn", "No heartbeat writer has reported yet."],
      ),
      false,
    );
    expect(strip).toEqual({
      severity: "down",
      items: [
        { component: "workers", state: "down", text: "No worker has reported for 42 s." },
        { component: "polling", state: "down", text: "No worker has polled for 42 s." },
        { component: "broker", state: "warn", text: "412 tasks wait in the broker's queue: the workers do not keep up." },
        { component: "heartbeat", state: "warn", text: "No heartbeat writer has reported yet." },
      ],
    });
  });

  it("is a warning when nothing is down", () => {
    const strip = buildHealthStrip(
      readiness(["store", "ok", "The store answers."], ["deliveries", "warn", "The oldest undelivered webhook has waited 2 min (3 pending)."]),
      false,
    );
    expect(strip?.severity).toBe("warn");
    expect(strip?.items.map((i) => i.component)).toEqual(["deliveries"]);
  });

  it("says the API does not answer when the request failed, even over an earlier answer", () => {
    const unreachable = {
      severity: "down",
      items: [{ component: "api", state: "down", text: API_UNREACHABLE }],
    };
    expect(API_UNREACHABLE).toBe("The Lagscope API does not answer: the figures on this page may be stale.");
    expect(buildHealthStrip(undefined, true)).toEqual(unreachable);
    expect(buildHealthStrip(allOk, true)).toEqual(unreachable);
    expect(buildHealthStrip(readiness(["broker", "down", "The broker is unreachable (refused)."]), true)).toEqual(unreachable);
  });

  it("keeps a message as the API wrote it (markup is text, not HTML)", () => {
    const strip = buildHealthStrip(readiness(["store", "down", "The store is unreachable (<b>refused</b>)."]), false);
    expect(strip?.items[0]?.text).toBe("The store is unreachable (<b>refused</b>).");
  });
});
