// The explorer's state lives in the URL (shareable, back/forward work): range, custom window,
// hidden channels, lag source, log scale, and the preset a drag-to-zoom came from.
import type { TimeWindow } from "./timeWindow";

export const RANGES = {
  "15m": 15 * 60_000,
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
} as const;
export type RangeName = keyof typeof RANGES;
export const RANGE_NAMES = Object.keys(RANGES) as RangeName[];

export const LAG_SOURCES = ["best", "heartbeat", "applier", "server", "all"] as const;
export type LagSourceChoice = (typeof LAG_SOURCES)[number];

export interface ExplorerState {
  /** A named range that follows the clock, or "custom" with from/to. */
  range: RangeName | "custom";
  fromMs: number | null;
  toMs: number | null;
  hidden: number[];
  source: LagSourceChoice;
  log: boolean;
  /** Buckets per lag line (default 600; 100–2000). */
  points: number;
  /** The named range a drag-to-zoom left (custom windows only): what "Reset zoom" returns to. */
  zoomFrom: RangeName | null;
  /** The user chose the range (a preset clicked, a window picked, or either in the URL): it is
   * never fitted to the data. */
  chosen: boolean;
  /** Not in the URL: the span the default range was fitted to (see fitDefaultRange), or null. */
  fitMs: number | null;
}

export const DEFAULT_RANGE: RangeName = "1h";

export const DEFAULT_STATE: ExplorerState = {
  range: DEFAULT_RANGE,
  fromMs: null,
  toMs: null,
  hidden: [],
  source: "best",
  log: false,
  points: 600,
  zoomFrom: null,
  chosen: false,
  fitMs: null,
};

function instant(text: string | null): number | null {
  if (!text) return null;
  if (/^\d{10,15}$/.test(text)) return Number(text);
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? null : parsed;
}

function pointsParam(text: string | null): number {
  const n = Number(text);
  return text && Number.isInteger(n) ? Math.min(2000, Math.max(100, n)) : DEFAULT_STATE.points;
}

export function parseExplorerState(params: URLSearchParams): ExplorerState {
  const range = params.get("range");
  const fromMs = instant(params.get("from"));
  const toMs = instant(params.get("to"));
  const custom = fromMs !== null && toMs !== null && fromMs < toMs;
  const named = range !== null && range in RANGES;
  const source = params.get("source");
  const preset = params.get("preset");
  return {
    range: custom ? "custom" : named ? (range as RangeName) : DEFAULT_STATE.range,
    fromMs: custom ? fromMs : null,
    toMs: custom ? toMs : null,
    hidden: (params.get("hide") ?? "")
      .split(",")
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0),
    source: LAG_SOURCES.includes(source as LagSourceChoice) ? (source as LagSourceChoice) : "best",
    log: params.get("log") === "1",
    points: pointsParam(params.get("pts")),
    zoomFrom: custom && preset && preset in RANGES ? (preset as RangeName) : null,
    chosen: custom || named,
    fitMs: null,
  };
}

/** Only what differs from the defaults, in a stable order. */
export function explorerSearch(state: ExplorerState): string {
  const params = new URLSearchParams();
  if (state.range === "custom" && state.fromMs !== null && state.toMs !== null) {
    params.set("from", new Date(state.fromMs).toISOString());
    params.set("to", new Date(state.toMs).toISOString());
    if (state.zoomFrom) params.set("preset", state.zoomFrom);
  } else if (state.chosen || state.range !== DEFAULT_STATE.range) {
    // A chosen "1h" is written too: without it the page would fit the range to the data again.
    params.set("range", state.range);
  }
  if (state.hidden.length) params.set("hide", [...state.hidden].sort((a, b) => a - b).join(","));
  if (state.source !== "best") params.set("source", state.source);
  if (state.log) params.set("log", "1");
  if (state.points !== DEFAULT_STATE.points) params.set("pts", String(state.points));
  const text = params.toString();
  return text ? `?${text}` : "";
}

export function explorerWindow(state: ExplorerState): TimeWindow {
  if (state.range === "custom" && state.fromMs !== null && state.toMs !== null) {
    return { kind: "fixed", startMs: state.fromMs, endMs: state.toMs };
  }
  if (state.fitMs !== null) return { kind: "last", spanMs: state.fitMs };
  return { kind: "last", spanMs: RANGES[state.range === "custom" ? "1h" : state.range] };
}

/** A fitted span is whole minutes, at least this, with this much room before the first sample. */
export const FIT_STEP_MS = 60_000;
export const FIT_MIN_MS = 2 * FIT_STEP_MS;
export const FIT_LEAD_MS = 30_000;

/**
 * The default range fitted to the data: a cluster younger than the default hour (a fresh demo)
 * is drawn from its start to now, not as two minutes against the right edge of an hour. The
 * span is whole minutes (so the queries' window changes once a minute, not every render) and
 * follows the clock like the preset; once the data is an hour old the preset is the fit.
 * A range the user chose (or one in the URL) is left as it is. `dataStartMs`: when the data
 * can begin at the earliest (the cluster's creation: no sample predates it); null: unknown.
 */
export function fitDefaultRange(state: ExplorerState, dataStartMs: number | null, nowMs: number): ExplorerState {
  if (state.chosen || state.range !== DEFAULT_STATE.range || dataStartMs === null) return { ...state, fitMs: null };
  const age = Math.max(0, nowMs - dataStartMs);
  const span = Math.max(FIT_MIN_MS, Math.ceil((age + FIT_LEAD_MS) / FIT_STEP_MS) * FIT_STEP_MS);
  return { ...state, fitMs: span < RANGES[DEFAULT_RANGE] ? span : null };
}

export function isLive(state: ExplorerState): boolean {
  return state.range !== "custom";
}

/** Zoom out: twice the span around the same centre, never past now. */
export function zoomedOut(startMs: number, endMs: number, nowMs: number): { fromMs: number; toMs: number } {
  const span = endMs - startMs;
  const toMs = Math.min(nowMs, endMs + span / 2);
  return { fromMs: toMs - 2 * span, toMs };
}

/** Zoom in to [fromMs, toMs], remembering the named range the first zoom left. */
export function zoomedIn(state: ExplorerState, fromMs: number, toMs: number): Partial<ExplorerState> {
  return { range: "custom", fromMs, toMs, zoomFrom: state.range === "custom" ? state.zoomFrom : state.range, chosen: true };
}

/** "Reset zoom": back to the named range the zoom left, following the clock again. Back to the
 * default range it is the default again, fitted to young data (the URL does not tell a clicked
 * "1h" from the default one a zoom left; the two differ only while the data is under an hour). */
export function zoomReset(state: ExplorerState): Partial<ExplorerState> {
  const range = state.zoomFrom ?? DEFAULT_STATE.range;
  return { range, fromMs: null, toMs: null, zoomFrom: null, chosen: range !== DEFAULT_STATE.range };
}
