// Axis ticks for lag charts: seconds stay seconds up to ten minutes ("80 s", not "1.33 m"),
// since the tuning figures people compare are read in seconds.
import { formatDurationTick } from "./format";

export function lagAxisTick(seconds: number): string {
  if (seconds === 0) return "0";
  if (Math.abs(seconds) >= 1 && Math.abs(seconds) < 600) return `${Number(seconds.toPrecision(4))} s`;
  return formatDurationTick(seconds);
}
