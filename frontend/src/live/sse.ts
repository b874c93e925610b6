// A Server-Sent Events parser (the WHATWG "event stream interpretation", without EventSource):
// the stream is read with fetch so that it can carry the Bearer header, which EventSource cannot.
// Pure and incremental: feed it text as it arrives, split anywhere (even between CR and LF),
// and it returns the complete messages; an event cut off by the end of the stream is dropped.

/** A dispatched event. ``id`` is the last event id seen so far (it persists across events). */
export interface SseEvent {
  kind: "event";
  event: string;
  data: string;
  id: string;
}

/** The server's reconnection delay (a ``retry:`` field of digits only). */
export interface SseRetry {
  kind: "retry";
  ms: number;
}

/** A comment line (``: keepalive``): no event, but proof the connection is alive. */
export interface SseComment {
  kind: "comment";
  text: string;
}

export type SseMessage = SseEvent | SseRetry | SseComment;

export interface SseParser {
  /** The messages completed by this piece of text, in order. */
  push(text: string): SseMessage[];
  /** The last event id the stream set (the value to send as Last-Event-ID on resume). */
  readonly lastEventId: string;
}

export function createSseParser(initialLastEventId = ""): SseParser {
  let buffer = "";
  let started = false;
  let skipLf = false; // the previous piece ended in CR: a leading LF belongs to that line end
  let data: string[] = [];
  let eventType = "";
  let lastEventId = initialLastEventId;

  function line(text: string, out: SseMessage[]) {
    if (text === "") {
      if (data.length) out.push({ kind: "event", event: eventType || "message", data: data.join("\n"), id: lastEventId });
      data = [];
      eventType = "";
      return;
    }
    if (text.startsWith(":")) {
      out.push({ kind: "comment", text: text.slice(1).replace(/^ /, "") });
      return;
    }
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") eventType = value;
    else if (field === "id") {
      if (!value.includes("\0")) lastEventId = value;
    } else if (field === "retry" && /^\d+$/.test(value)) out.push({ kind: "retry", ms: Number(value) });
    // Any other field is ignored, as the spec says.
  }

  return {
    push(text: string): SseMessage[] {
      const out: SseMessage[] = [];
      let chunk = text;
      if (!started && chunk.length) {
        started = true;
        if (chunk.startsWith("\uFEFF")) chunk = chunk.slice(1);
      }
      if (skipLf && chunk.startsWith("\n")) chunk = chunk.slice(1);
      if (chunk.length) skipLf = false;
      buffer += chunk;
      let from = 0;
      for (let i = 0; i < buffer.length; i += 1) {
        const c = buffer[i];
        if (c !== "\r" && c !== "\n") continue;
        line(buffer.slice(from, i), out);
        if (c === "\r") {
          if (i + 1 === buffer.length) skipLf = true;
          else if (buffer[i + 1] === "\n") i += 1;
        }
        from = i + 1;
      }
      buffer = buffer.slice(from);
      return out;
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
