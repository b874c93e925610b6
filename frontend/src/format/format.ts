// Every number the UI shows goes through here: durations, rates, counts, bytes, times.
// A missing value (null / undefined / NaN) is an em dash, never 0.

export const MISSING = "—";

function missing(value: number | null | undefined): value is null | undefined {
  return value === null || value === undefined || Number.isNaN(value);
}

/** Seconds → `850 ms`, `4.25 s`, `42.3 s`, `12 m 5 s`, `1 h 12 m`, `3 d 4 h`. */
export function formatDuration(seconds: number | null | undefined): string {
  if (missing(seconds)) return MISSING;
  if (!Number.isFinite(seconds)) return seconds > 0 ? "∞" : "−∞";
  if (seconds < 0) return `−${formatDuration(-seconds)}`;
  if (seconds === 0) return "0 s";
  if (seconds < 1) {
    const ms = seconds * 1000;
    return ms < 1 ? `${ms.toFixed(2)} ms` : `${Math.round(ms)} ms`;
  }
  if (seconds < 10) return `${trim(seconds.toFixed(2))} s`;
  if (seconds < 60) return `${trim(seconds.toFixed(1))} s`;
  const total = Math.round(seconds);
  if (total < 3600) return pair(Math.floor(total / 60), "m", total % 60, "s");
  if (total < 86400) return pair(Math.floor(total / 3600), "h", Math.floor((total % 3600) / 60), "m");
  return pair(Math.floor(total / 86400), "d", Math.floor((total % 86400) / 3600), "h");
}

function pair(big: number, bigUnit: string, small: number, smallUnit: string): string {
  return small ? `${big} ${bigUnit} ${small} ${smallUnit}` : `${big} ${bigUnit}`;
}

function trim(fixed: string): string {
  return fixed.includes(".") ? fixed.replace(/\.?0+$/, "") : fixed;
}

/** A compact axis tick for seconds: `0`, `500 ms`, `30 s`, `2 m`, `1.5 h`. */
export function formatDurationTick(seconds: number): string {
  if (seconds === 0) return "0";
  if (Math.abs(seconds) < 1) return `${trim((seconds * 1000).toPrecision(3))} ms`;
  if (Math.abs(seconds) < 60) return `${trim(seconds.toPrecision(3))} s`;
  if (Math.abs(seconds) < 3600) return `${trim((seconds / 60).toPrecision(3))} m`;
  if (Math.abs(seconds) < 86400) return `${trim((seconds / 3600).toPrecision(3))} h`;
  return `${trim((seconds / 86400).toPrecision(3))} d`;
}

/** A count with an SI suffix: `950`, `1.25 k`, `3.4 M`. */
export function formatCount(value: number | null | undefined): string {
  if (missing(value)) return MISSING;
  const abs = Math.abs(value);
  if (abs < 1000) return abs < 10 && !Number.isInteger(value) ? trim(value.toFixed(2)) : trim(value.toFixed(abs < 100 ? 1 : 0));
  const units = ["k", "M", "G", "T"];
  let scaled = value;
  let unit = "";
  for (const next of units) {
    if (Math.abs(scaled) < 1000) break;
    scaled /= 1000;
    unit = next;
  }
  return `${trim(scaled.toPrecision(3))} ${unit}`;
}

/** Events per second: `948 trx/s`, `1.2 k trx/s`, `0.5 /s`. */
export function formatRate(perSecond: number | null | undefined, unit = ""): string {
  if (missing(perSecond)) return MISSING;
  return `${formatCount(perSecond)} ${unit}/s`.replace(/ {2,}/g, " ");
}

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes in binary units: `512 B`, `1.5 KiB`, `12.3 MiB`. */
export function formatBytes(bytes: number | null | undefined): string {
  if (missing(bytes)) return MISSING;
  let value = Math.abs(bytes);
  let index = 0;
  while (value >= 1024 && index < BYTE_UNITS.length - 1) {
    value /= 1024;
    index += 1;
  }
  const text = index === 0 ? String(Math.round(value)) : trim(value.toPrecision(3));
  return `${bytes < 0 ? "−" : ""}${text} ${BYTE_UNITS[index]}`;
}

export function formatBytesRate(bytesPerSecond: number | null | undefined): string {
  return missing(bytesPerSecond) ? MISSING : `${formatBytes(bytesPerSecond)}/s`;
}

/** Epoch ms → `10:42:07` (24-hour clock) in the given time zone (default: the browser's). */
export function formatClock(ms: number, timeZone?: string): string {
  return new Intl.DateTimeFormat("en-GB", {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZone,
  }).format(ms);
}

/** Epoch ms → `23 Nov 10:42:07`. */
export function formatDateTime(ms: number, timeZone?: string): string {
  const day = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone }).format(ms);
  return `${day} ${formatClock(ms, timeZone)}`;
}

/** An axis tick for a time range: clock time for spans up to a day, date and hour beyond. */
export function formatTimeTick(ms: number, spanMs: number, timeZone?: string): string {
  if (spanMs <= 2 * 86_400_000) {
    const text = formatClock(ms, timeZone);
    return spanMs <= 5 * 60_000 ? text : text.slice(0, 5);
  }
  const day = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "short", timeZone }).format(ms);
  return spanMs <= 8 * 86_400_000 ? `${day} ${formatClock(ms, timeZone).slice(0, 5)}` : day;
}

/** How long ago, from now: `12 s ago`, `3 m ago`. */
export function formatAgo(ms: number | null | undefined, nowMs: number): string {
  if (missing(ms)) return "never";
  const seconds = Math.max(0, (nowMs - ms) / 1000);
  if (seconds < 1) return "just now";
  return `${formatDuration(seconds < 60 ? Math.round(seconds) : seconds)} ago`;
}

/** A parameter value as the server reports it; NULL and empty shown as words. */
export function formatParamValue(value: string | null | undefined): string {
  if (value === null || value === undefined) return "unset";
  if (value === "") return "(empty)";
  return value;
}
