// Time-axis ticks at round steps (every 2 min, every 6 h…) in the browser's time zone.
const STEPS_MS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
  172800, 604800,
].map((s) => s * 1000);

/** Round instants in [startMs, endMs], at most `maxTicks` of them. `offsetMs`: the zone's
 * offset from UTC (east positive), so hour and day ticks fall on local round times. */
export function timeTicks(startMs: number, endMs: number, maxTicks = 8, offsetMs = 0): number[] {
  const span = endMs - startMs;
  if (!(span > 0)) return [startMs];
  const step = STEPS_MS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / 86_400_000) * 86_400_000;
  const first = Math.ceil((startMs + offsetMs) / step) * step - offsetMs;
  const ticks: number[] = [];
  for (let t = first; t <= endMs; t += step) ticks.push(t);
  return ticks;
}

export function localOffsetMs(atMs: number): number {
  return -new Date(atMs).getTimezoneOffset() * 60_000;
}
