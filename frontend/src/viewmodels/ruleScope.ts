// An alert rule's scope and overrides as the form picks them: cluster → instance → channel,
// channels as the cluster's status lists them (the ones polled so far).
import type { Schemas } from "../api/client";

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

/** The scope fields of a rule body from the form's selects ("" = every). A channel counts only
 * under its instance: choosing every instance widens the rule to every channel. */
export function scopeIds(
  clusterId: string,
  instanceId: string,
  channelId: string,
): Pick<Schemas["RuleIn"], "cluster_id" | "instance_id" | "channel_id"> {
  const cluster = clusterId ? Number(clusterId) : null;
  const instance = instanceId ? Number(instanceId) : null;
  const channel = instance !== null && channelId ? Number(channelId) : null;
  return { cluster_id: cluster, instance_id: instance, channel_id: channel };
}
