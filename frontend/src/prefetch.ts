// What the page the app opens on asks first, asked at start-up beside the session check and the
// page's chunk. The explorer's cluster and then its lag series were asked only once the page's
// code, the chart library with it, had loaded and run: ~0.35 s after the session check on a
// 2-core box (bench/ui_render.py). The lag series is asked here as the page will ask it (the
// same query key), so the page finds it answered or on its way.
import type { QueryClient } from "@tanstack/react-query";
import { clusterQuery } from "./hooks/useCluster";
import { seriesGroupQuery } from "./hooks/useSeries";
import { pageFor } from "./pageFor";
import { explorerSeries } from "./viewmodels/explorerModel";
import { explorerWindow, fitDefaultRange, parseExplorerState } from "./viewmodels/explorerState";

/** The cluster a path is about (/clusters/:id and its sub-pages), if any. */
export function clusterIdOf(pathname: string): number | null {
  const match = /^\/clusters\/(\d+)(?:\/|$)/.exec(pathname);
  if (!match) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

export async function prefetchFor(client: QueryClient, pathname: string, search: string): Promise<void> {
  const clusterId = clusterIdOf(pathname);
  if (clusterId === null) return;
  const cluster = await client.fetchQuery(clusterQuery(clusterId)).catch(() => undefined);
  if (cluster === undefined || pageFor(pathname) !== "cluster") return;
  // As ClusterPage works out its state on its first render (its clock to the minute may differ
  // at a minute's edge: then the page asks again, as it would have).
  const asked = parseExplorerState(new URLSearchParams(search));
  const state = fitDefaultRange(asked, Date.parse(cluster.created_at), Date.now());
  const { lag } = explorerSeries(cluster, state, explorerWindow(state));
  if (lag.instanceIds.length > 0) void client.prefetchQuery(seriesGroupQuery(lag));
}
