// The compare page's question lives in the URL: two replicas over one window
// (`channel`, `other`, `range` or `from`/`to`), or one replica in two windows
// (`channel`, `a_from`, `a_to`, `b_from`, `b_to`). Missing replicas are chosen by the page.

export const COMPARE_RANGES = {
  "15m": 15 * 60_000,
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
} as const;
export type CompareRange = keyof typeof COMPARE_RANGES;

export interface Span {
  startMs: number;
  endMs: number;
}

export type CompareQuery =
  | {
      mode: "channels";
      channelId: number | null;
      otherId: number | null;
      range: CompareRange | "custom";
      /** Set when range is "custom". */
      span: Span | null;
    }
  | { mode: "windows"; channelId: number | null; a: Span; b: Span };

/** What GET /compare is asked (useCompare): the query with its replicas chosen and its window fixed. */
export type CompareRequest =
  | { mode: "channels"; channelId: number; otherId: number; span: Span }
  | { mode: "windows"; channelId: number; a: Span; b: Span };

function instant(text: string | null): number | null {
  if (!text) return null;
  if (/^\d{10,15}$/.test(text)) return Number(text);
  const parsed = Date.parse(text);
  return Number.isNaN(parsed) ? null : parsed;
}

function id(text: string | null): number | null {
  const value = Number(text);
  return text && Number.isInteger(value) && value > 0 ? value : null;
}

function span(params: URLSearchParams, from: string, to: string): Span | null {
  const startMs = instant(params.get(from));
  const endMs = instant(params.get(to));
  return startMs !== null && endMs !== null && startMs < endMs ? { startMs, endMs } : null;
}

export function parseCompareQuery(params: URLSearchParams): CompareQuery {
  const channelId = id(params.get("channel"));
  const a = span(params, "a_from", "a_to");
  const b = span(params, "b_from", "b_to");
  if (a && b) return { mode: "windows", channelId, a, b };
  const custom = span(params, "from", "to");
  const range = params.get("range");
  return {
    mode: "channels",
    channelId,
    otherId: id(params.get("other")),
    range: custom ? "custom" : range && range in COMPARE_RANGES ? (range as CompareRange) : "1h",
    span: custom,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

export function compareSearch(query: CompareQuery): string {
  const params = new URLSearchParams();
  if (query.channelId !== null) params.set("channel", String(query.channelId));
  if (query.mode === "windows") {
    params.set("a_from", iso(query.a.startMs));
    params.set("a_to", iso(query.a.endMs));
    params.set("b_from", iso(query.b.startMs));
    params.set("b_to", iso(query.b.endMs));
  } else {
    if (query.otherId !== null) params.set("other", String(query.otherId));
    if (query.range === "custom" && query.span) {
      params.set("from", iso(query.span.startMs));
      params.set("to", iso(query.span.endMs));
    } else if (query.range !== "1h") {
      params.set("range", query.range);
    }
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The window of a two-replica comparison; a named range ends at `nowMs`. */
export function channelsSpan(query: Extract<CompareQuery, { mode: "channels" }>, nowMs: number): Span {
  if (query.range === "custom" && query.span) return query.span;
  const spanMs = COMPARE_RANGES[query.range === "custom" ? "1h" : query.range];
  return { startMs: nowMs - spanMs, endMs: nowMs };
}

export function compareChannelsLink(
  clusterId: number,
  channelId: number,
  otherId: number | null,
  fromMs: number,
  toMs: number,
): string {
  const query: CompareQuery = {
    mode: "channels",
    channelId,
    otherId,
    range: "custom",
    span: { startMs: fromMs, endMs: toMs },
  };
  return `/clusters/${clusterId}/compare${compareSearch(query)}`;
}
