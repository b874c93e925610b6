// Time windows: "the last 15 minutes" (follows the clock) or a fixed [start, end).
export type TimeWindow =
  | { kind: "last"; spanMs: number }
  | { kind: "fixed"; startMs: number; endMs: number };

export function resolveWindow(window: TimeWindow, nowMs: number): { startMs: number; endMs: number } {
  return window.kind === "last"
    ? { startMs: nowMs - window.spanMs, endMs: nowMs }
    : { startMs: window.startMs, endMs: window.endMs };
}
