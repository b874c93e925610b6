import { describe, expect, it } from "vitest";
import { nextStep, openStream, reconnectDelayMs, type LiveStatus, type StreamDeps } from "./connection";

describe("reconnectDelayMs", () => {
  it("waits the server's delay, doubling after each failure in a row, capped", () => {
    expect(reconnectDelayMs(2000, 0)).toBe(2000);
    expect(reconnectDelayMs(2000, 1)).toBe(2000);
    expect(reconnectDelayMs(2000, 2)).toBe(4000);
    expect(reconnectDelayMs(2000, 3)).toBe(8000);
    expect(reconnectDelayMs(2000, 10)).toBe(30_000);
    expect(reconnectDelayMs(500, 1)).toBe(500);
  });
});

describe("nextStep", () => {
  it("stops on revocation and refusals, retries drops and server errors", () => {
    expect(nextStep({ kind: "aborted" })).toBeNull();
    expect(nextStep({ kind: "revoked", detail: "token revoked" })).toEqual({ stop: true, reason: "token revoked" });
    expect(nextStep({ kind: "http", status: 401 })).toMatchObject({ stop: true });
    expect(nextStep({ kind: "http", status: 404 })).toMatchObject({ stop: true, reason: "no such cluster" });
    expect(nextStep({ kind: "http", status: 503 })).toMatchObject({ stop: false, failed: true });
    expect(nextStep({ kind: "http", status: 429 })).toMatchObject({ stop: false, failed: true });
    expect(nextStep({ kind: "network", message: "x" })).toMatchObject({ stop: false, failed: true });
    expect(nextStep({ kind: "closed" })).toMatchObject({ stop: false, failed: false });
  });
});

/** A fake server: each fetch gets a stream the test writes to and ends. */
function harness() {
  const encoder = new TextEncoder();
  const calls: { headers: Record<string, string>; signal: AbortSignal }[] = [];
  const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  const answers: (number | "network")[] = [];
  let hidden = false;
  const listeners = new Set<() => void>();
  const timers: { fn: () => void; ms: number }[] = [];
  const statuses: LiveStatus[] = [];
  const batches: string[][] = [];
  const deps: StreamDeps = {
    fetch: (_url, init) => {
      const signal = init.signal as AbortSignal;
      calls.push({ headers: init.headers as Record<string, string>, signal });
      const answer = answers.shift() ?? 200;
      if (answer === "network") return Promise.reject(new TypeError("Failed to fetch"));
      if (answer !== 200) return Promise.resolve(new Response("{}", { status: answer }));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          streams.push(controller);
          signal.addEventListener("abort", () => controller.error(new DOMException("aborted", "AbortError")));
        },
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    },
    token: () => "tok",
    visibility: {
      hidden: () => hidden,
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    setTimeout: (fn, ms) => {
      const timer = { fn, ms };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (handle) => {
      const i = timers.indexOf(handle as (typeof timers)[number]);
      if (i >= 0) timers.splice(i, 1);
    },
  };
  const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
  return {
    deps,
    calls,
    answers,
    statuses,
    batches,
    timers,
    send: (text: string) => streams.at(-1)?.enqueue(encoder.encode(text)),
    end: () => streams.at(-1)?.close(),
    setHidden(value: boolean) {
      hidden = value;
      listeners.forEach((l) => l());
    },
    listeners,
    async fire() {
      const timer = timers.shift();
      timer?.fn();
      await flush();
    },
    flush,
    open(lastEventId?: string) {
      return openStream(
        {
          url: "/api/v1/stream?cluster_id=1",
          lastEventId,
          onEvents: (events) => batches.push(events.map((e) => `${e.event}:${e.data}`)),
          onStatus: (s) => statuses.push(s),
        },
        deps,
      );
    },
  };
}

describe("openStream", () => {
  it("sends the token and the start id, reports events per chunk, resumes with the last id", async () => {
    const h = harness();
    h.open("100");
    await h.flush();
    expect(h.calls[0]?.headers).toMatchObject({ Authorization: "Bearer tok", "Last-Event-ID": "100" });
    expect(h.statuses.at(-1)).toEqual({ state: "connected" });
    h.send("retry: 1500\n\nid: 200\nevent: sample\ndata: a\n\nid: 300\nevent: sample\nda");
    await h.flush();
    h.send("ta: b\n\n: keepalive\n\n");
    await h.flush();
    expect(h.batches).toEqual([["sample:a"], ["sample:b"]]);
    h.end();
    await h.flush();
    expect(h.statuses.at(-1)).toEqual({ state: "reconnecting", reason: "stream closed", inMs: 1500 });
    expect(h.calls).toHaveLength(1); // nothing before the delay
    await h.fire();
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1]?.headers["Last-Event-ID"]).toBe("300");
  });

  it("backs off after failures in a row and resets once connected", async () => {
    const h = harness();
    h.answers.push("network", 503, "network");
    h.open();
    await h.flush();
    expect(h.statuses.at(-1)).toMatchObject({ state: "reconnecting", inMs: 2000 });
    await h.fire();
    expect(h.statuses.at(-1)).toMatchObject({ state: "reconnecting", inMs: 4000, reason: "server answered HTTP 503" });
    await h.fire();
    expect(h.statuses.at(-1)).toMatchObject({ state: "reconnecting", inMs: 8000 });
    await h.fire();
    expect(h.statuses.at(-1)).toEqual({ state: "connected" });
    h.end();
    await h.flush();
    expect(h.statuses.at(-1)).toMatchObject({ state: "reconnecting", inMs: 2000 });
  });

  it("stops for good on event: revoked and says why", async () => {
    const h = harness();
    h.open();
    await h.flush();
    h.send('event: sample\ndata: a\n\nevent: revoked\ndata: {"detail":"token revoked"}\n\n');
    await h.flush();
    expect(h.batches).toEqual([["sample:a"]]);
    expect(h.statuses.at(-1)).toEqual({ state: "ended", reason: "token revoked" });
    expect(h.timers).toHaveLength(0);
    h.setHidden(true);
    h.setHidden(false);
    await h.flush();
    expect(h.calls).toHaveLength(1);
  });

  it("stops on 401 without retrying", async () => {
    const h = harness();
    h.answers.push(401);
    h.open();
    await h.flush();
    expect(h.statuses.at(-1)).toEqual({ state: "ended", reason: "signed out or token revoked" });
    expect(h.timers).toHaveLength(0);
  });

  it("aborts while the tab is hidden and resumes from the last id when it is shown", async () => {
    const h = harness();
    h.open();
    await h.flush();
    h.send("id: 7\nevent: sample\ndata: a\n\n");
    await h.flush();
    h.setHidden(true);
    await h.flush();
    expect(h.calls[0]?.signal.aborted).toBe(true);
    expect(h.statuses.at(-1)).toEqual({ state: "paused" });
    expect(h.timers).toHaveLength(0); // an aborted stream schedules no reconnect
    h.setHidden(false);
    await h.flush();
    expect(h.calls).toHaveLength(2);
    expect(h.calls[1]?.headers["Last-Event-ID"]).toBe("7");
    expect(h.statuses.at(-1)).toEqual({ state: "connected" });
  });

  it("a pending reconnect is dropped while hidden; starting hidden waits for visible", async () => {
    const h = harness();
    h.answers.push("network");
    h.open();
    await h.flush();
    expect(h.timers).toHaveLength(1);
    h.setHidden(true);
    expect(h.timers).toHaveLength(0);
    h.setHidden(false);
    await h.flush();
    expect(h.calls).toHaveLength(2);
    const hidden = harness();
    hidden.setHidden(true);
    hidden.open();
    await hidden.flush();
    expect(hidden.calls).toHaveLength(0);
    expect(hidden.statuses.at(-1)).toEqual({ state: "paused" });
  });

  it("close aborts the stream, cancels timers and stops listening", async () => {
    const h = harness();
    const stream = h.open();
    await h.flush();
    stream.close();
    await h.flush();
    expect(h.calls[0]?.signal.aborted).toBe(true);
    expect(h.listeners.size).toBe(0);
    expect(h.timers).toHaveLength(0);
  });
});
