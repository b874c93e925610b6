// Names of the exported files: what it is, the cluster, the replicas and the time range in UTC
// to the minute, e.g. lagscope-episode-12-lab-replica1-2026-12-06T0312Z–2026-12-06T0342Z.md.
// Names come from the servers and the inventory, so every part is made safe for any file system
// (no path separators, no characters Windows refuses, no leading dot, bounded length).

const MINUTE_MS = 60_000;
const PART_MAX = 40;
// A replica or cluster name in a file name: long enough to tell them apart, short enough that
// the whole name stays under the 255 bytes file systems allow.
const NAME_MAX = 32;
const REPLICAS_SHOWN = 3;

/** A name as a file-name part: ASCII letters, digits, dot, dash and underscore only; accents
 * dropped ("réplica" → "replica"), every other run of characters one dash; "unnamed" when
 * nothing is left. */
export function safeFilePart(text: string, maxLength = PART_MAX): string {
  const ascii = text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  const safe = ascii
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .slice(0, maxLength)
    .replace(/^[-.]+|[-.]+$/g, "");
  return safe === "" ? "unnamed" : safe;
}

/** An instant in UTC to the minute, without colons: 2026-12-06T0312Z. */
export function utcMinute(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-06T03:12:45.000Z
  return `${iso.slice(0, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}Z`;
}

/** The range to whole minutes that covers it: its start rounded down, its end up. */
export function utcRange(fromMs: number, toMs: number): string {
  const from = Math.floor(fromMs / MINUTE_MS) * MINUTE_MS;
  const to = Math.max(from, Math.ceil(toMs / MINUTE_MS) * MINUTE_MS);
  return `${utcMinute(from)}–${utcMinute(to)}`;
}

/** The replicas, each once, in the order given; past three, how many more. */
export function replicasPart(replicas: readonly string[]): string {
  const names = [...new Set(replicas.map((r) => safeFilePart(r, NAME_MAX)))];
  if (names.length === 0) return "no-replica";
  const shown = names.slice(0, REPLICAS_SHOWN).join("+");
  return names.length > REPLICAS_SHOWN ? `${shown}+${names.length - REPLICAS_SHOWN}-more` : shown;
}

export interface ExportName {
  /** What the file shows: "lag", "episode-12". */
  what: string;
  cluster: string;
  replicas: readonly string[];
  fromMs: number;
  toMs: number;
  ext: "png" | "md" | "html";
}

export function exportFileName({ what, cluster, replicas, fromMs, toMs, ext }: ExportName): string {
  return `lagscope-${safeFilePart(what)}-${safeFilePart(cluster, NAME_MAX)}-${replicasPart(replicas)}-${utcRange(fromMs, toMs)}.${ext}`;
}
