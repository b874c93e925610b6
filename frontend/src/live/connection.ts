// One live stream of a cluster's new samples (GET /api/v1/stream), read with fetch so that it
// carries the Bearer header. It resumes with Last-Event-ID after a drop, waits the server's
// `retry:` delay (doubling after each failed attempt), stops for good on `event: revoked` or a
// 4xx, and is closed (aborted, not merely ignored) while the tab is hidden: a hidden tab holds
// no connection and no server work, and a visible one resumes where it stopped.
import { createSseParser, type SseEvent } from "./sse";

export type LiveStatus =
  | { state: "connecting" }
  | { state: "connected" }
  | { state: "reconnecting"; reason: string; inMs: number }
  | { state: "paused" }
  | { state: "ended"; reason: string };

/** How one attempt ended. */
export type Outcome =
  | { kind: "aborted" }
  | { kind: "closed" } // the server ended a stream that had opened
  | { kind: "network"; message: string }
  | { kind: "http"; status: number }
  | { kind: "revoked"; detail: string };

export const DEFAULT_RETRY_MS = 2000; // the server's RETRY_MS, until it says otherwise
export const MAX_RETRY_MS = 30_000; // a server down for minutes is retried twice a minute

/** The wait before the next attempt: the server's delay, doubled for each failed attempt in a
 * row after the first (a stream that opened and then closed is no failure). */
export function reconnectDelayMs(retryMs: number, failures: number): number {
  return Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.max(0, failures - 1));
}

/** What follows an attempt: stop (with the reason shown), or try again. */
export function nextStep(outcome: Outcome): { stop: true; reason: string } | { stop: false; failed: boolean; reason: string } | null {
  switch (outcome.kind) {
    case "aborted":
      return null;
    case "revoked":
      return { stop: true, reason: outcome.detail || "token revoked" };
    case "http":
      if (outcome.status === 401 || outcome.status === 403) return { stop: true, reason: "signed out or token revoked" };
      if (outcome.status === 404) return { stop: true, reason: "no such cluster" };
      if (outcome.status < 500 && outcome.status !== 429) return { stop: true, reason: `refused (HTTP ${outcome.status})` };
      return { stop: false, failed: true, reason: `server answered HTTP ${outcome.status}` };
    case "network":
      return { stop: false, failed: true, reason: "connection lost" };
    case "closed":
      return { stop: false, failed: false, reason: "stream closed" };
  }
}

export interface Visibility {
  hidden(): boolean;
  subscribe(listener: () => void): () => void;
}

export interface StreamDeps {
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  token: () => string | null;
  visibility: Visibility;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

export interface StreamOptions {
  url: string;
  /** Where the first connection starts (e.g. a little before now, to meet the fetched series). */
  lastEventId?: string;
  /** The events of one chunk of the stream, together: one re-render per chunk, not per event. */
  onEvents: (events: SseEvent[]) => void;
  onStatus: (status: LiveStatus) => void;
}

export function documentVisibility(): Visibility {
  return {
    hidden: () => document.hidden,
    subscribe(listener) {
      document.addEventListener("visibilitychange", listener);
      return () => document.removeEventListener("visibilitychange", listener);
    },
  };
}

export function openStream(options: StreamOptions, deps: StreamDeps): { close: () => void } {
  let lastEventId = options.lastEventId ?? "";
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  let controller: AbortController | null = null;
  let timer: unknown = null;
  let stopped = false; // closed by the caller, or ended by the server

  function start() {
    timer = null;
    if (stopped) return;
    if (deps.visibility.hidden()) {
      options.onStatus({ state: "paused" });
      return;
    }
    const own = new AbortController();
    controller = own; // one attempt at a time: any earlier one was aborted before this
    void attempt(own.signal).then((outcome) => {
      if (controller === own) controller = null;
      finish(outcome);
    });
  }

  async function attempt(signal: AbortSignal): Promise<Outcome> {
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    const token = deps.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (lastEventId) headers["Last-Event-ID"] = lastEventId;
    try {
      const response = await deps.fetch(options.url, { headers, signal, cache: "no-store" });
      if (!response.ok || !response.body) return { kind: "http", status: response.status };
      failures = 0;
      options.onStatus({ state: "connected" });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      const parser = createSseParser(lastEventId);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { kind: "closed" };
        const events: SseEvent[] = [];
        for (const message of parser.push(decoder.decode(value, { stream: true }))) {
          if (message.kind === "retry") retryMs = message.ms;
          if (message.kind !== "event") continue;
          lastEventId = message.id;
          if (message.event === "revoked") {
            if (events.length) options.onEvents(events);
            void reader.cancel().catch(() => undefined);
            return { kind: "revoked", detail: revokedDetail(message.data) };
          }
          events.push(message);
        }
        if (events.length && !signal.aborted) options.onEvents(events);
      }
    } catch (exc) {
      if (signal.aborted) return { kind: "aborted" };
      return { kind: "network", message: exc instanceof Error ? exc.message : String(exc) };
    }
  }

  function finish(outcome: Outcome) {
    const step = nextStep(outcome);
    if (step === null || stopped) return;
    if (step.stop) {
      stopped = true;
      options.onStatus({ state: "ended", reason: step.reason });
      return;
    }
    if (step.failed) failures += 1;
    const inMs = reconnectDelayMs(retryMs, failures);
    options.onStatus({ state: "reconnecting", reason: step.reason, inMs });
    timer = deps.setTimeout(start, inMs);
  }

  function halt() {
    if (timer !== null) deps.clearTimeout(timer);
    timer = null;
    controller?.abort();
    controller = null;
  }

  const unsubscribe = deps.visibility.subscribe(() => {
    if (stopped) return;
    if (deps.visibility.hidden()) {
      halt();
      options.onStatus({ state: "paused" });
    } else if (controller === null) {
      if (timer !== null) deps.clearTimeout(timer);
      failures = 0;
      options.onStatus({ state: "connecting" });
      start();
    }
  });

  options.onStatus({ state: "connecting" });
  start();
  return {
    close() {
      stopped = true;
      unsubscribe();
      halt();
    },
  };
}

function revokedDetail(data: string): string {
  try {
    const parsed: unknown = JSON.parse(data);
    if (parsed && typeof parsed === "object" && "detail" in parsed && typeof parsed.detail === "string") return parsed.detail;
  } catch {
    // not JSON: the reason is the plain text
  }
  return data;
}
