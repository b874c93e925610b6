import { describe, expect, it } from "vitest";
import { createSseParser, type SseMessage } from "./sse";

const STREAM =
  "retry: 2000\n\n" +
  ": keepalive\n\n" +
  'id: 1700000000000000\nevent: sample\ndata: {"channel_id":1,"ts":1700000000000}\n\n' +
  "data: first\ndata: second\n\n" +
  'event: revoked\ndata: {"detail":"token revoked"}\n\n';

function all(pieces: readonly string[], initialId = ""): SseMessage[] {
  const parser = createSseParser(initialId);
  return pieces.flatMap((p) => parser.push(p));
}

const EXPECTED: SseMessage[] = [
  { kind: "retry", ms: 2000 },
  { kind: "comment", text: "keepalive" },
  { kind: "event", event: "sample", data: '{"channel_id":1,"ts":1700000000000}', id: "1700000000000000" },
  { kind: "event", event: "message", data: "first\nsecond", id: "1700000000000000" },
  { kind: "event", event: "revoked", data: '{"detail":"token revoked"}', id: "1700000000000000" },
];

describe("createSseParser", () => {
  it("parses a whole stream: retry, comments, ids, event names, multi-line data", () => {
    expect(all([STREAM])).toEqual(EXPECTED);
  });

  it("gives the same messages however the stream is split", () => {
    for (let size = 1; size <= 7; size += 1) {
      const pieces = [];
      for (let i = 0; i < STREAM.length; i += size) pieces.push(STREAM.slice(i, i + size));
      expect(all(pieces)).toEqual(EXPECTED);
    }
  });

  it("accepts CRLF and lone CR line ends, also split between CR and LF", () => {
    const crlf = STREAM.replace(/\n/g, "\r\n");
    expect(all([crlf])).toEqual(EXPECTED);
    const cut = crlf.indexOf("\r\n") + 1; // the first piece ends in CR, the next starts with LF
    expect(all([crlf.slice(0, cut), crlf.slice(cut)])).toEqual(EXPECTED);
    expect(all([...crlf])).toEqual(EXPECTED);
    expect(all([STREAM.replace(/\n/g, "\r")])).toEqual(EXPECTED);
  });

  it("drops an event the stream ended in the middle of, and data-less events", () => {
    expect(all(["event: sample\n\n", "data: half"])).toEqual([]);
  });

  it("keeps the last id across events, ignores ids with NUL, and starts from a given id", () => {
    const parser = createSseParser("41");
    expect(parser.lastEventId).toBe("41");
    expect(parser.push("data: a\n\n")).toEqual([{ kind: "event", event: "message", data: "a", id: "41" }]);
    parser.push("id: 4\0 2\ndata: b\n\n");
    expect(parser.lastEventId).toBe("41");
    parser.push("id: 42\n\n"); // an id alone sets the id without an event
    expect(parser.lastEventId).toBe("42");
  });

  it("reads fields without a colon or space, ignores unknown fields and bad retry values", () => {
    expect(all(["data\ndata:x\nfoo: bar\nretry: 2s\n\n"])).toEqual([{ kind: "event", event: "message", data: "\nx", id: "" }]);
  });

  it("strips one leading byte order mark and only one leading space of a value", () => {
    expect(all(["\uFEFFdata:  two spaces\n\n"])).toEqual([{ kind: "event", event: "message", data: " two spaces", id: "" }]);
  });
});
