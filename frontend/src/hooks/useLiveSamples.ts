import { useEffect, useRef, useState } from "react";
import { readToken } from "../api/auth";
import { documentVisibility, openStream, type LiveStatus } from "../live/connection";
import { appendSamples, parseSample, type LiveSample } from "../live/samples";

/** The first connection asks for the last minute too, so that the stream meets the series the
 * page fetched at about the same moment with no hole between them (duplicates are dropped). */
const LOOKBACK_MS = 60_000;

export interface LiveFeed {
  /** null while not live (a fixed range). */
  status: LiveStatus | null;
  /** The streamed samples of the last ``keepMs``, oldest first, one per channel and time. */
  samples: readonly LiveSample[];
}

const IDLE: LiveFeed = { status: null, samples: [] };

/** The cluster's new samples from GET /stream while ``enabled``: one connection, closed
 * while the tab is hidden, resumed when it is shown, ended for good when the token is revoked. */
export function useLiveSamples(clusterId: number, { enabled, keepMs }: { enabled: boolean; keepMs: number }): LiveFeed {
  const [feed, setFeed] = useState<LiveFeed>(IDLE);
  const keep = useRef(keepMs);
  useEffect(() => {
    keep.current = keepMs;
  }, [keepMs]);

  useEffect(() => {
    if (!enabled || !Number.isInteger(clusterId) || clusterId < 1) return;
    const stream = openStream(
      {
        url: `/api/v1/stream?cluster_id=${clusterId}`,
        lastEventId: String((Date.now() - LOOKBACK_MS) * 1000), // ids are epoch µs
        onEvents(events) {
          const samples = events.filter((e) => e.event === "sample").flatMap((e) => parseSample(e.data) ?? []);
          setFeed((f) => ({ ...f, samples: appendSamples(f.samples, samples, Date.now() - keep.current) }));
        },
        onStatus: (status) => setFeed((f) => ({ ...f, status })),
      },
      {
        fetch: (url, init) => window.fetch(url, init),
        token: readToken,
        visibility: documentVisibility(),
        setTimeout: (fn, ms) => window.setTimeout(fn, ms),
        clearTimeout: (handle) => window.clearTimeout(handle as number),
      },
    );
    return () => {
      stream.close();
      setFeed(IDLE);
    };
  }, [clusterId, enabled]);

  return enabled ? feed : IDLE;
}
