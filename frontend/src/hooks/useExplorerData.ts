// Everything the cluster explorer reads from the API, as one ExplorerData for
// buildExplorerModel: the cluster and its status, the lag, strips and server panels (three
// series requests, one per group), verdicts,
// parameter changes, annotations, alerts, and the live stream, each at its own pace.
import { useMemo } from "react";
import { explorerSeries, spanMs, STRIP_POINTS, type ExplorerData } from "../viewmodels/explorerModel";
import { liveIntervalMs, streamedRefetchMs } from "../viewmodels/explorer";
import { explorerWindow, isLive, type ExplorerState } from "../viewmodels/explorerState";
import { useFiringAlerts } from "./useAlertEvents";
import { useAlertRules } from "./useAlertRules";
import { useAnnotations } from "./useAnnotations";
import { useCauses } from "./useCauses";
import { useCluster } from "./useCluster";
import { CLUSTER_ALERT_EVENTS_LIMIT, useClusterAlertEvents } from "./useClusterAlertEvents";
import { useClusterStatus } from "./useClusterStatus";
import { useLiveSamples } from "./useLiveSamples";
import { useMe } from "./useMe";
import { useNow } from "./useNow";
import { useParamChanges } from "./useParamChanges";
import { useSeenOnce } from "./useSeenOnce";
import { useSeriesGroup } from "./useSeries";
import { useVerdicts } from "./useVerdicts";

const NONE: ExplorerData["lag"] = {};

export function useExplorerData(clusterId: number, state: ExplorerState) {
  const window = useMemo(() => explorerWindow(state), [state]);
  const live = isLive(state);
  const span = spanMs(state);
  const interval = liveIntervalMs(span);

  const me = useMe();
  const cluster = useCluster(clusterId);
  const status = useClusterStatus(clusterId, interval);
  // Live: the stream follows the right edge of the "best" lag; the range is re-fetched rarely.
  const feed = useLiveSamples(clusterId, { enabled: live, keepMs: 2 * streamedRefetchMs(span) + 60_000 });
  const streamed = live && state.source === "best" && feed.status?.state === "connected";
  const asks = useMemo(
    () => explorerSeries(cluster.data, { source: state.source, points: state.points }, window, streamed),
    [cluster.data, state.source, state.points, window, streamed],
  );
  const [stripRef, stripSeen] = useSeenOnce<HTMLElement>();
  const [instanceRef, instanceSeen] = useSeenOnce<HTMLElement>();
  // One request per group (the lag, the strips, the server panels), each with every metric of
  // the group: a refresh is three series requests where one per metric made ~13.
  const lag = useSeriesGroup(asks.lag, { intervalMs: streamed ? streamedRefetchMs(span) : interval });
  // The charts below the lag wait for it: on a first load the panels are still in view (the
  // page is short), and their series requests queued the lag behind them in the browser's
  // six connections and the API's thread pool (bench/ui_render.py, first chart).
  const noReplicas = asks.lag.instanceIds.length === 0;
  const lagSettled = noReplicas || !lag.isPending;
  const instances = useSeriesGroup(asks.instances, {
    intervalMs: Math.max(interval, 10_000),
    enabled: instanceSeen && lagSettled,
  });
  // The strips: one request for the four; while streamed, the rates (not in the stream) keep
  // the live pace and the backlog (in the stream) is re-fetched as rarely as the lag.
  // A live "best" view first waits for the stream's first answer, so the strips are not
  // asked for together (four metrics) and again apart a moment later when it connects.
  const streamPending = live && state.source === "best" && (!feed.status || feed.status.state === "connecting");
  const stripsEnabled = stripSeen && lagSettled && !streamPending;
  const rates = useSeriesGroup(asks.strips[0], { intervalMs: interval, enabled: stripsEnabled });
  const backlog = useSeriesGroup(asks.strips[1], { intervalMs: streamedRefetchMs(span), enabled: stripsEnabled });
  const strips = useMemo(() => ({ ...backlog.data, ...rates.data }), [backlog.data, rates.data]);
  const verdicts = useVerdicts(clusterId, window, STRIP_POINTS, interval);
  const causes = useCauses(clusterId, window, Math.max(interval, 5000));
  const changes = useParamChanges(clusterId, window, Math.max(interval, 5000));
  const annotations = useAnnotations(clusterId, window, Math.max(interval, 10_000));
  const alertEvents = useClusterAlertEvents(clusterId, Math.max(interval, 10_000));
  const firing = useFiringAlerts(clusterId);
  const rules = useAlertRules();
  const now = useNow(interval);

  const data: ExplorerData | undefined = cluster.data
    ? {
        cluster: cluster.data,
        status: status.data,
        statusAtMs: status.dataUpdatedAt,
        me: me.data,
        lag: lag.data ?? NONE,
        strips,
        instances: instances.data ?? NONE,
        verdicts: verdicts.data,
        causes: causes.data,
        changes: changes.data ?? [],
        annotations: annotations.data ?? [],
        alertEvents: alertEvents.data ?? [],
        alertEventsLimit: CLUSTER_ALERT_EVENTS_LIMIT,
        firing: firing.data,
        rules: rules.data ?? [],
        samples: feed.samples,
      }
    : undefined;

  return {
    cluster,
    data,
    nowMs: now,
    streamed,
    stream: feed.status,
    span,
    lagPending: lag.isPending && !noReplicas,
    causesPending: causes.isPending,
    errors: {
      lag: lag.error,
      status: status.error,
      verdicts: verdicts.error,
      causes: causes.error,
      changes: changes.error,
      annotations: annotations.error,
    },
    stripRef,
    stripSeen,
    instanceRef,
    instanceSeen,
  };
}
