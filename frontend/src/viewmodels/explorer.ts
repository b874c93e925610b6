// Small pure pieces of the explorer page: its channel list, annotation scopes, refresh pace.
import type { Schemas } from "../api/client";
import { channelLabel } from "./colors";
import { MUTED } from "../theme/palette";

type ClusterOut = Schemas["ClusterOut"];
type ChannelStatus = Schemas["ChannelStatusOut"];

export interface ExplorerChannel {
  id: number;
  label: string;
  color: string;
  region: string;
}

export function buildExplorerChannels(
  cluster: ClusterOut | undefined,
  channels: readonly ChannelStatus[],
  colors: ReadonlyMap<number, string>,
): ExplorerChannel[] {
  const regions = new Map((cluster?.instances ?? []).map((i) => [i.id, i.region]));
  return channels.map((c) => ({
    id: c.id,
    label: channelLabel(c.instance, c.name),
    color: colors.get(c.id) ?? MUTED,
    region: regions.get(c.instance_id) ?? "",
  }));
}

/** Scope choices for a note: the cluster, each instance, each replica channel. */
export function annotationScopes(cluster: ClusterOut | undefined, channels: readonly ChannelStatus[]) {
  return [
    { value: "cluster", label: "whole cluster" },
    ...(cluster?.instances ?? []).map((i) => ({ value: `i${i.id}`, label: `instance ${i.name}` })),
    ...channels.map((c) => ({ value: `c${c.id}`, label: `channel ${channelLabel(c.instance, c.name)}` })),
  ];
}

/** Names for scopes in the annotation list ("i2" → "replica1"). */
export function scopeNames(cluster: ClusterOut | undefined, channels: readonly ChannelStatus[]): Map<string, string> {
  return new Map([
    ...(cluster?.instances ?? []).map((i) => [`i${i.id}`, i.name] as [string, string]),
    ...channels.map((c) => [`c${c.id}`, channelLabel(c.instance, c.name)] as [string, string]),
  ]);
}

export function scopeIds(scope: string): { instance_id: number | null; channel_id: number | null } {
  const id = Number(scope.slice(1));
  if (scope.startsWith("i") && id > 0) return { instance_id: id, channel_id: null };
  if (scope.startsWith("c") && id > 0) return { instance_id: null, channel_id: id };
  return { instance_id: null, channel_id: null };
}

export function scopeOf(a: { instance_id: number | null; channel_id: number | null }): string {
  if (a.channel_id !== null) return `c${a.channel_id}`;
  if (a.instance_id !== null) return `i${a.instance_id}`;
  return "cluster";
}

/** How often a live chart refreshes: a 15-minute chart every 2 s, a 30-day one every minute. */
export function liveIntervalMs(spanMs: number): number {
  if (spanMs <= 3_600_000) return 2000;
  if (spanMs <= 24 * 3_600_000) return 10_000;
  return 60_000;
}

/** While the live stream feeds the lag chart, the full range is re-fetched only this often, as
 * a safety net (late samples, rollups): 30 ticks, so a minute for a 15-minute chart. */
export function streamedRefetchMs(spanMs: number): number {
  return 30 * liveIntervalMs(spanMs);
}
