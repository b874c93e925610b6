// The explorer's hover instant, shared outside Recharts: the charts sync their own tooltips and
// cursors through syncId, but the parameter lanes are plain HTML, so the chart under the pointer
// also reports its instant here and the lanes draw the same vertical line. A tiny external store,
// so a mouse move re-renders the lanes only, never the page.
import { useSyncExternalStore } from "react";
import type { MouseHandlerDataParam } from "recharts";

const cursors = new Map<string, number | null>();
const listeners = new Map<string, Set<() => void>>();

export function setChartCursor(syncId: string, t: number | null): void {
  if ((cursors.get(syncId) ?? null) === t) return;
  cursors.set(syncId, t);
  for (const listener of listeners.get(syncId) ?? []) listener();
}

/** The instant hovered on any chart of `syncId`, or null. */
export function useChartCursor(syncId: string): number | null {
  return useSyncExternalStore(
    (listener) => {
      const set = listeners.get(syncId) ?? new Set();
      listeners.set(syncId, set);
      set.add(listener);
      return () => set.delete(listener);
    },
    () => cursors.get(syncId) ?? null,
  );
}

/** Handlers for a Recharts chart of `syncId`: report the hovered instant, clear it on leave. */
export function cursorHandlers(syncId: string) {
  return {
    onMouseMove: (state: MouseHandlerDataParam) => {
      const t = Number(state.activeLabel);
      setChartCursor(syncId, state.isTooltipActive && Number.isFinite(t) ? t : null);
    },
    onMouseLeave: () => setChartCursor(syncId, null),
  };
}
