// What the page the app opens on asks first, asked at start-up beside the session check and the
// page's chunk: the explorer's cluster request otherwise waited for the chart library to load and
// run (~0.35 s of the first chart on a 2-core box, bench/ui_render.py), and its lag series for
// the cluster.
import type { QueryClient } from "@tanstack/react-query";
import { clusterQuery } from "./hooks/useCluster";

/** The cluster a path is about (/clusters/:id and its sub-pages), if any. */
export function clusterIdOf(pathname: string): number | null {
  const match = /^\/clusters\/(\d+)(?:\/|$)/.exec(pathname);
  if (!match) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

export function prefetchFor(client: QueryClient, pathname: string): void {
  const clusterId = clusterIdOf(pathname);
  if (clusterId !== null) void client.prefetchQuery(clusterQuery(clusterId));
}
