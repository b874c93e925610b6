import { describe, expect, it } from "vitest";
import { inboxItem, type InboxEntry } from "./inbox";

const firing: InboxEntry = {
  id: 3,
  received_at: "2026-11-25T12:00:00Z",
  last_received_at: "2026-11-25T12:00:05Z",
  times_received: 2,
  headers: {
    "User-Agent": "lagscope/1.0",
    "Idempotency-Key": "lagscope-1-c2-firing-1",
    "X-Lagscope-Signature": "v1=ab",
  },
  payload: {
    status: "firing",
    rule: { id: 1, name: "demo: replica lag over 30 s", metric: "lag" },
    summary: "replica1 lag 41 s > 30 s",
    why: [
      { cause: "blocked_by_session", words: "blocked by a session", sentence: "A session on replica1 holds a row lock.", action: "…" },
      { cause: "unexplained", words: "not explained" },
    ],
  },
  signature: "valid",
};

describe("the demo's inbox", () => {
  it("reads what fired, where and why from a generic payload", () => {
    const item = inboxItem(firing);
    expect(item).toMatchObject({
      id: 3,
      status: "firing",
      rule: "demo: replica lag over 30 s",
      summary: "replica1 lag 41 s > 30 s",
      why: [
        { words: "blocked by a session", sentence: "A session on replica1 holds a row lock.", action: "…" },
        { words: "not explained", sentence: null, action: null },
      ],
      times: 2,
    });
    expect(item.lastReceivedMs - item.receivedMs).toBe(5000);
    expect(item.signature).toMatch(/^signature valid/);
  });

  it("lists the key and the signature first", () => {
    expect(inboxItem(firing).headers.map(([name]) => name)).toEqual(["Idempotency-Key", "X-Lagscope-Signature", "User-Agent"]);
  });

  it("shows the whole payload as pretty-printed JSON text, markup and all", () => {
    const payload = { summary: "<img src=x onerror=alert(1)>", n: [1, 2] };
    const item = inboxItem({ ...firing, payload });
    expect(item.json).toBe(JSON.stringify(payload, null, 2));
    expect(item.json).toContain("<img src=x onerror=alert(1)>"); // rendered as text by React, never as HTML
  });

  it("copes with payloads of any shape", () => {
    for (const payload of [null, 42, "text", [1, 2], { why: "not a list", rule: "x", status: 5 }]) {
      const item = inboxItem({ ...firing, payload });
      expect(item.status).toBe("alert");
      expect(item.rule).toBeNull();
      expect(item.why).toEqual([]);
      expect(item.json).toBe(JSON.stringify(payload, null, 2));
    }
    expect(inboxItem({ ...firing, signature: "unsigned" }).signature).toBe("unsigned");
  });

  it("leads with the episode's main cause and links its page inside the dashboard", () => {
    const payload = {
      ...firing.payload as object,
      scope: { cluster_id: 1, instance: "replica1", channel: "" },
      state: "behind, cause not identified",
      episode: {
        id: 17,
        main_cause: {
          cause: "relay_log_durability",
          words: "fsync per event on the receiver",
          sentence: "replica1's IO thread queued events in 44 of 45 polls; sync_relay_log=1.",
          action: "Set sync_relay_log=0 on replica1.",
        },
        url: "http://elsewhere.example/clusters/1/episodes/17",
      },
    };
    const item = inboxItem({ ...firing, payload });
    expect(item.episode).toEqual({
      words: "fsync per event on the receiver",
      sentence: "replica1's IO thread queued events in 44 of 45 polls; sync_relay_log=1.",
      action: "Set sync_relay_log=0 on replica1.",
      href: "/clusters/1/episodes/17",
    });
    expect(item.state).toBe("behind, cause not identified");
  });

  it("says nothing of an episode the payload does not carry, or carries oddly", () => {
    expect(inboxItem(firing).episode).toBeNull();
    expect(inboxItem(firing).state).toBeNull();
    const odd = { ...firing.payload as object, scope: { cluster_id: "1" }, episode: { id: -3, main_cause: { cause: null, words: "cause not named yet" } } };
    expect(inboxItem({ ...firing, payload: odd }).episode).toEqual({ words: null, sentence: null, action: null, href: null });
  });
});
