// What the explorer's live indicator says: the range kind and, for a live range, the state of
// the stream in words (the symbol and colour only repeat them).
import type { LiveStatus } from "../live/connection";

export interface LiveIndicator {
  text: string;
  tone: "live" | "warn" | "ended" | "fixed";
  /** The longer explanation (hover). */
  title: string;
}

export function liveIndicator(live: boolean, status: LiveStatus | null): LiveIndicator {
  if (!live) return { text: "❚❚ fixed range", tone: "fixed", title: "A fixed range: the chart does not follow the clock" };
  switch (status?.state) {
    case undefined:
    case "connecting":
      return { text: "◌ live: connecting", tone: "warn", title: "Opening the live stream; the chart polls meanwhile" };
    case "connected":
      return { text: "● live: streaming", tone: "live", title: "New samples arrive from the live stream as they are polled" };
    case "reconnecting":
      return {
        text: "◌ live: reconnecting",
        tone: "warn",
        title: `${status.reason}; trying again in ${Math.round(status.inMs / 1000)} s (the chart polls meanwhile)`,
      };
    case "paused":
      return { text: "❚❚ live: paused while the tab is hidden", tone: "warn", title: "Resumes where it stopped when the tab is shown" };
    case "ended":
      return { text: `■ live ended: ${status.reason}`, tone: "ended", title: "The stream will not reconnect; sign in again or reload" };
  }
}
