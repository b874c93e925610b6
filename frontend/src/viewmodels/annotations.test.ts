import { describe, expect, it } from "vitest";
import type { Schemas } from "../api/client";
import { annotationDraft, buildAnnotationMarks, canEditNote, canWrite, parseTags } from "./annotations";

const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);
const iso = (s: number) => new Date(T0 + s * 1000).toISOString();

function note(over: Partial<Schemas["AnnotationOut"]>): Schemas["AnnotationOut"] {
  return {
    id: 1,
    cluster_id: 1,
    instance_id: null,
    channel_id: null,
    starts_at: iso(10),
    ends_at: null,
    text: "raised flush",
    tags: [],
    author: "alice",
    author_id: 3,
    created_at: iso(11),
    scope: "cluster",
    updated_at: null,
    updated_by: null,
    ...over,
  };
}

describe("buildAnnotationMarks", () => {
  const alice = { user_id: 3, username: "alice", role: "editor" as const };

  it("makes points and clipped ranges, with author and text on hover", () => {
    const marks = buildAnnotationMarks(
      [
        note({ id: 2, starts_at: iso(-100), ends_at: iso(50), text: "load test", tags: ["load"], author: "bob", author_id: 4, channel_id: 7 }),
        note({ id: 1 }),
      ],
      T0,
      T0 + 600_000,
      alice,
      new Map([["c7", "replica2"]]),
    );
    expect(marks.map((m) => [m.id, m.kind, m.drawFromMs - T0, m.drawToMs - T0])).toEqual([
      [2, "range", 0, 50_000],
      [1, "point", 10_000, 10_000],
    ]);
    expect(marks[0]?.title).toMatch(/^bob · \d\d:\d\d:\d\d–\d\d:\d\d:\d\d · replica2: load test \[load\]$/);
    expect(marks[0]?.canEdit).toBe(false); // bob's note: alice is only an editor
    expect(marks[1]?.canEdit).toBe(true);
    expect(marks[1]?.scope).toBe("whole cluster");
  });

  it("leaves out notes outside the range; admins may edit all, viewers none", () => {
    expect(buildAnnotationMarks([note({ starts_at: iso(-10) })], T0, T0 + 1000, alice)).toEqual([]);
    expect(buildAnnotationMarks([note({})], T0, T0 + 60_000, { user_id: 1, username: "root", role: "admin" })[0]?.canEdit).toBe(true);
    expect(buildAnnotationMarks([note({})], T0, T0 + 60_000, { user_id: 3, username: "alice", role: "viewer" })[0]?.canEdit).toBe(false);
    expect(canWrite({ user_id: 5, username: "v", role: "viewer" })).toBe(false);
  });

  it("goes by the author's account, not the name (a new ALICE is not a deleted alice)", () => {
    const newAlice = { user_id: 9, username: "ALICE", role: "editor" as const };
    expect(canEditNote(newAlice, note({}))).toBe(false);
    expect(canEditNote(newAlice, note({ author_id: null }))).toBe(false);
    expect(canEditNote({ user_id: null, username: "demo", role: "editor" }, note({ author_id: null }))).toBe(false);
    expect(canEditNote(newAlice, note({ author: "bob", author_id: 9 }))).toBe(true);
  });
});

describe("annotationDraft", () => {
  it("is a point for a click and an ordered range for a drag", () => {
    expect(annotationDraft(5000, 5100, 1000)).toEqual({ startsMs: 5000, endsMs: null });
    expect(annotationDraft(9000, 2000, 1000)).toEqual({ startsMs: 2000, endsMs: 9000 });
  });
});

describe("parseTags", () => {
  it("splits, trims and dedupes", () => {
    expect(parseTags(" tuning, flush,,tuning ")).toEqual(["tuning", "flush"]);
  });
});
