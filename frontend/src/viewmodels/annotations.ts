// Annotations on the lag chart: points (▲ and a line) and ranges (a band), with who wrote them.
import type { Schemas } from "../api/client";
import { formatClock, formatDateTime } from "../format/format";

type AnnotationOut = Schemas["AnnotationOut"];
type Me = Schemas["MeOut"];

export interface AnnotationMark {
  id: number;
  kind: "point" | "range";
  startMs: number;
  /** Clipped to the chart's range (a range that started before it starts at its left edge). */
  drawFromMs: number;
  drawToMs: number;
  text: string;
  tags: string[];
  author: string;
  scope: string;
  when: string;
  /** Hover: author and text. */
  title: string;
  canEdit: boolean;
}

const RANK = { viewer: 0, editor: 1, admin: 2 } as const;

export function canWrite(me: Me | undefined): boolean {
  return me !== undefined && RANK[me.role] >= RANK.editor;
}

/** Admins edit any note; an editor only notes of their own account. By id, not by name: a
 * user created later under a deleted author's name is someone else (the API refuses them). */
export function canEditNote(me: Me | undefined, a: AnnotationOut): boolean {
  if (me === undefined) return false;
  if (me.role === "admin") return true;
  return canWrite(me) && me.user_id !== null && a.author_id === me.user_id;
}

function scopeText(a: AnnotationOut, names: ReadonlyMap<string, string>): string {
  if (a.channel_id !== null) return names.get(`c${a.channel_id}`) ?? `channel ${a.channel_id}`;
  if (a.instance_id !== null) return names.get(`i${a.instance_id}`) ?? `instance ${a.instance_id}`;
  return "whole cluster";
}

export function buildAnnotationMarks(
  annotations: readonly AnnotationOut[],
  startMs: number,
  endMs: number,
  me: Me | undefined,
  names: ReadonlyMap<string, string> = new Map(),
): AnnotationMark[] {
  const fmt = endMs - startMs > 86_400_000 ? formatDateTime : formatClock;
  return annotations
    .map((a) => {
      const start = Date.parse(a.starts_at);
      const end = a.ends_at ? Date.parse(a.ends_at) : null;
      const kind: AnnotationMark["kind"] = end !== null && end > start ? "range" : "point";
      const when = kind === "range" ? `${fmt(start)}–${fmt(end as number)}` : fmt(start);
      const scope = scopeText(a, names);
      return {
        id: a.id,
        kind,
        startMs: start,
        drawFromMs: Math.max(start, startMs),
        drawToMs: kind === "range" ? Math.min(end as number, endMs) : start,
        text: a.text,
        tags: a.tags,
        author: a.author,
        scope,
        when,
        title:
          `${a.author} · ${when} · ${scope}: ${a.text}${a.tags.length ? ` [${a.tags.join(", ")}]` : ""}` +
          (a.updated_by ? ` (edited by ${a.updated_by})` : ""),
        canEdit: canEditNote(me, a),
      };
    })
    .filter((m) => m.drawToMs >= startMs && m.drawFromMs <= endMs)
    .sort((a, b) => a.startMs - b.startMs);
}

/** A click (point) or a drag (range) on the chart, in time order; a drag shorter than
 * `minRangeMs` is a click. */
export function annotationDraft(
  downMs: number,
  upMs: number,
  minRangeMs: number,
): { startsMs: number; endsMs: number | null } {
  const [a, b] = downMs <= upMs ? [downMs, upMs] : [upMs, downMs];
  return b - a < minRangeMs ? { startsMs: downMs, endsMs: null } : { startsMs: a, endsMs: b };
}

/** Tags typed as "tuning, flush" → ["tuning", "flush"]. */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(",").map((t) => t.trim()).filter(Boolean))];
}
