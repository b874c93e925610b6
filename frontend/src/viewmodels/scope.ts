// What an alert rule or a silence applies to, as the one ScopePicker picks it: cluster →
// instance → channel, and a region; channels as the cluster's status lists them (the ones
// polled so far). "" in a select means "every".
import type { Schemas } from "../api/client";

type ClusterOut = Schemas["ClusterOut"];

export interface ChannelOption {
  id: number;
  instanceId: number;
  /** "(default channel)" for the unnamed one. */
  name: string;
  /** "replica1 · (default channel)": for a list of the whole cluster's channels. */
  label: string;
}

export function channelName(name: string): string {
  return name === "" ? "(default channel)" : name;
}

/** The cluster's channels, by instance then channel name. */
export function channelOptions(status: Schemas["ClusterStatusOut"]): ChannelOption[] {
  return [...status.channels]
    .sort((a, b) => a.instance.localeCompare(b.instance) || a.name.localeCompare(b.name))
    .map((c) => ({
      id: c.id,
      instanceId: c.instance_id,
      name: channelName(c.name),
      label: `${c.instance} · ${channelName(c.name)}`,
    }));
}

/** The picker's values: ids as the selects hold them ("" = every), the region as typed. */
export interface ScopeValues {
  clusterId: string;
  instanceId: string;
  channelId: string;
  region: string;
}

export const EVERYWHERE: ScopeValues = { clusterId: "", instanceId: "", channelId: "", region: "" };

function idText(id: number | null | undefined): string {
  return id === null || id === undefined ? "" : String(id);
}

/** A stored rule's or silence's scope as the picker shows it. */
export function scopeValues(stored: {
  cluster_id?: number | null;
  instance_id?: number | null;
  channel_id?: number | null;
  region?: string | null;
}): ScopeValues {
  return {
    clusterId: idText(stored.cluster_id),
    instanceId: idText(stored.instance_id),
    channelId: idText(stored.channel_id),
    region: stored.region ?? "",
  };
}

/** The scope fields of a rule or silence body. A channel counts only under its instance:
 * choosing every instance widens the scope to every channel. A blank region is none. */
export function scopeBody(values: ScopeValues): {
  cluster_id: number | null;
  instance_id: number | null;
  channel_id: number | null;
  region: string | null;
} {
  const instance = values.instanceId ? Number(values.instanceId) : null;
  return {
    cluster_id: values.clusterId ? Number(values.clusterId) : null,
    instance_id: instance,
    channel_id: instance !== null && values.channelId ? Number(values.channelId) : null,
    region: values.region.trim() || null,
  };
}

/** Another cluster: its instance and channel are chosen again. */
export function withCluster(values: ScopeValues, clusterId: string): ScopeValues {
  return { ...values, clusterId, instanceId: "", channelId: "" };
}

/** Another instance: its channel is chosen again. */
export function withInstance(values: ScopeValues, instanceId: string): ScopeValues {
  return { ...values, instanceId, channelId: "" };
}

/** The instances to choose from: the chosen cluster's, or every cluster's. */
export function scopeInstances(values: ScopeValues, clusters: readonly ClusterOut[]): ClusterOut["instances"] {
  return clusters.filter((c) => !values.clusterId || String(c.id) === values.clusterId).flatMap((c) => c.instances);
}

/** The cluster whose channels to list: the chosen one, or the chosen instance's (an instance
 * chosen under "every cluster" still names its cluster); null: none. */
export function channelCluster(values: ScopeValues, clusters: readonly ClusterOut[]): number | null {
  if (values.clusterId) return Number(values.clusterId);
  const owner = clusters.find((c) => c.instances.some((i) => String(i.id) === values.instanceId));
  return owner ? owner.id : null;
}

/** A stored scope in words: "lab · replica1 · channel #4 · region far", or "everything". */
export function scopeText(
  stored: { cluster_id: number | null; instance_id: number | null; channel_id: number | null; region: string | null },
  clusters: readonly ClusterOut[],
): string {
  const cluster = clusters.find((c) => c.id === stored.cluster_id);
  const instance = clusters.flatMap((c) => c.instances).find((i) => i.id === stored.instance_id);
  const parts = [
    stored.cluster_id !== null ? (cluster?.name ?? `cluster #${stored.cluster_id}`) : null,
    stored.instance_id !== null ? (instance?.name ?? `instance #${stored.instance_id}`) : null,
    stored.channel_id !== null ? `channel #${stored.channel_id}` : null,
    stored.region ? `region ${stored.region}` : null,
  ].filter((p): p is string => p !== null);
  return parts.length ? parts.join(" · ") : "everything";
}
