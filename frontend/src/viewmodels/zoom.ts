// Drag to zoom on the explorer's lag chart: a drag's extent (in the chart's time values) becomes
// the custom window the URL carries. Pure, so the rules below are tested without a browser.

/** A drag narrower than this share of the plot is a click or a twitch, not a zoom (≈ 5 px at 1000 px). */
export const MIN_DRAG_SHARE = 1 / 200;
/** The narrowest window a zoom makes: a minute still holds a dozen polls at 5 s, and the axis
 * keeps readable ticks. A narrower drag is widened around its centre. */
export const MIN_ZOOM_SPAN_MS = 60_000;

export interface ZoomBounds {
  /** The chart's current window, epoch ms. */
  startMs: number;
  endMs: number;
  minSpanMs?: number;
}

/** The window a drag from `aMs` to `bMs` zooms to: ordered, clamped to the chart's window, at least
 * `minSpanMs` wide (kept inside the window where it fits), whole milliseconds. Null when the drag
 * is too short to be one, or the window is empty. */
export function zoomRange(aMs: number, bMs: number, bounds: ZoomBounds): { fromMs: number; toMs: number } | null {
  const { startMs, endMs } = bounds;
  const span = endMs - startMs;
  if (!(span > 0) || !Number.isFinite(aMs) || !Number.isFinite(bMs)) return null;
  const lo = Math.max(startMs, Math.min(aMs, bMs));
  const hi = Math.min(endMs, Math.max(aMs, bMs));
  if (hi - lo < span * MIN_DRAG_SHARE) return null;
  const minSpan = Math.min(bounds.minSpanMs ?? MIN_ZOOM_SPAN_MS, span);
  let fromMs = lo;
  let toMs = hi;
  if (toMs - fromMs < minSpan) {
    const centre = (lo + hi) / 2;
    fromMs = Math.min(Math.max(startMs, centre - minSpan / 2), endMs - minSpan);
    toMs = fromMs + minSpan;
  }
  return { fromMs: Math.round(fromMs), toMs: Math.round(toMs) };
}

/** Pointer x (px from the plot area's left edge) → instant on a plot `widthPx` wide showing
 * [startMs, endMs]; null off the plot. */
export function timeAtPx(xPx: number, widthPx: number, startMs: number, endMs: number): number | null {
  if (!(widthPx > 0) || xPx < 0 || xPx > widthPx) return null;
  return startMs + (xPx / widthPx) * (endMs - startMs);
}
