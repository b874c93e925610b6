// The journal page's query lives in the URL (shareable): the range of steps and the before/after
// window settings the API judges them with. Unknown or out-of-range values fall back to defaults.
import type { TimeWindow } from "./timeWindow";

export const JOURNAL_RANGES = {
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
  "7d": 7 * 86_400_000,
} as const;
export type JournalRange = keyof typeof JOURNAL_RANGES;

/** The before/after window widths offered (seconds); any other valid value still works by URL. */
export const WIDTHS_S = [20, 60, 300, 600, 1800] as const;

export interface JournalQuery {
  range: JournalRange | "custom";
  fromMs: number | null;
  toMs: number | null;
  widthS: number;
  settleS: number;
  minSamples: number;
  groupS: number;
}

export const JOURNAL_DEFAULTS: JournalQuery = {
  range: "24h",
  fromMs: null,
  toMs: null,
  widthS: 600,
  settleS: 30,
  minSamples: 10,
  groupS: 10,
};

function instant(text: string | null): number | null {
  if (!text) return null;
  if (/^\d{10,15}$/.test(text)) return Number(text);
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? null : parsed;
}

function number(text: string | null, fallback: number, lo: number, hi: number, integer = false): number {
  if (text === null || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < lo || value > hi) return fallback;
  if (integer && !Number.isInteger(value)) return fallback;
  return value;
}

/** Bounds as the API accepts them (GET /clusters/{id}/journal). */
export function parseJournalQuery(params: URLSearchParams): JournalQuery {
  const fromMs = instant(params.get("from"));
  const toMs = instant(params.get("to"));
  const custom = fromMs !== null && toMs !== null && fromMs < toMs;
  const range = params.get("range");
  return {
    range: custom ? "custom" : range && range in JOURNAL_RANGES ? (range as JournalRange) : JOURNAL_DEFAULTS.range,
    fromMs: custom ? fromMs : null,
    toMs: custom ? toMs : null,
    widthS: number(params.get("width"), JOURNAL_DEFAULTS.widthS, 1, 86_400),
    settleS: number(params.get("settle"), JOURNAL_DEFAULTS.settleS, 0, 3_600),
    minSamples: number(params.get("min_samples"), JOURNAL_DEFAULTS.minSamples, 1, 100_000, true),
    groupS: number(params.get("group"), JOURNAL_DEFAULTS.groupS, 0, 600),
  };
}

/** Only what differs from the defaults, in a stable order. */
export function journalSearch(query: JournalQuery): string {
  const params = new URLSearchParams();
  if (query.range === "custom" && query.fromMs !== null && query.toMs !== null) {
    params.set("from", new Date(query.fromMs).toISOString());
    params.set("to", new Date(query.toMs).toISOString());
  } else if (query.range !== JOURNAL_DEFAULTS.range) {
    params.set("range", query.range);
  }
  if (query.widthS !== JOURNAL_DEFAULTS.widthS) params.set("width", String(query.widthS));
  if (query.settleS !== JOURNAL_DEFAULTS.settleS) params.set("settle", String(query.settleS));
  if (query.minSamples !== JOURNAL_DEFAULTS.minSamples) params.set("min_samples", String(query.minSamples));
  if (query.groupS !== JOURNAL_DEFAULTS.groupS) params.set("group", String(query.groupS));
  const text = params.toString();
  return text ? `?${text}` : "";
}

export function journalWindow(query: JournalQuery): TimeWindow {
  if (query.range === "custom" && query.fromMs !== null && query.toMs !== null) {
    return { kind: "fixed", startMs: query.fromMs, endMs: query.toMs };
  }
  return { kind: "last", spanMs: JOURNAL_RANGES[query.range === "custom" ? "24h" : query.range] };
}
