// Everything the cluster explorer reads from the API, as one ExplorerData for
// buildExplorerModel: the cluster and its status, the lag, strips and server panels, verdicts,
// parameter changes, annotations, alerts, and the live stream, each at its own pace.
import { useMemo } from "react";
import { isStreamed } from "../live/samples";
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
import { useSeriesList, type SeriesParams } from "./useSeries";
import { useVerdicts } from "./useVerdicts";

type Answers = ReturnType<typeof useSeriesList>;

function byMetric(asks: readonly SeriesParams[], answers: Answers) {
  return Object.fromEntries(asks.map((p, i) => [p.metric, answers[i]?.data])) as ExplorerData["lag"];
}

export function useExplorerData(clusterId: number, state: ExplorerState) {
  const window = useMemo(() => explorerWindow(state), [state]);
  const live = isLive(state);
  const span = spanMs(state);
  const interval = liveIntervalMs(span);

  const me = useMe();
  const cluster = useCluster(clusterId);
  const status = useClusterStatus(clusterId, interval);
  const asks = useMemo(
    () => explorerSeries(cluster.data, { source: state.source, points: state.points }, window),
    [cluster.data, state.source, state.points, window],
  );
  const [stripRef, stripSeen] = useSeenOnce<HTMLElement>();
  const [instanceRef, instanceSeen] = useSeenOnce<HTMLElement>();
  // Live: the stream follows the right edge of the "best" lag; the range is re-fetched rarely.
  const feed = useLiveSamples(clusterId, { enabled: live, keepMs: 2 * streamedRefetchMs(span) + 60_000 });
  const streamed = live && state.source === "best" && feed.status?.state === "connected";
  const lag = useSeriesList(asks.lag, { intervalMs: streamed ? streamedRefetchMs(span) : interval });
  // The charts below the lag wait for it: on a first load the panels are still in view (the
  // page is short), and their ~13 series requests queued the lag behind them in the browser's
  // six connections and the API's thread pool (bench/ui_render.py, first chart).
  const noReplicas = asks.lag.every((p) => p.instanceIds.length === 0);
  const lagSettled = noReplicas || lag.every((q) => !q.isPending);
  const instances = useSeriesList(asks.instances, {
    intervalMs: Math.max(interval, 10_000),
    enabled: instanceSeen && lagSettled,
  });
  // The backlog strips are in the stream too; the rates are not, and keep polling.
  const strips = useSeriesList(asks.strips, {
    intervalMs: interval,
    enabled: stripSeen && lagSettled,
    intervalFor: (p) => (streamed && isStreamed(p.metric) ? streamedRefetchMs(span) : undefined),
  });
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
        lag: byMetric(asks.lag, lag),
        strips: byMetric(asks.strips, strips),
        instances: byMetric(asks.instances, instances),
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
    lagPending: lag[0]?.isPending ?? false,
    causesPending: causes.isPending,
    errors: {
      lag: lag.find((q) => q.error)?.error ?? null,
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
