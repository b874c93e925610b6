// What the ScopePicker offers for a scope being chosen: the clusters, the instances under the
// chosen cluster, and the channels of the chosen (or the chosen instance's) cluster.
import { channelCluster, scopeInstances, type ScopeValues } from "../viewmodels/scope";
import { useClusterChannels } from "./useClusterChannels";
import { useClusters } from "./useClusters";

export function useScopeChoices(scope: ScopeValues) {
  const clusters = useClusters().data ?? [];
  const channels = useClusterChannels(channelCluster(scope, clusters)).data ?? [];
  return {
    clusters,
    instances: scopeInstances(scope, clusters),
    /** Every channel of the cluster listed (for channel overrides). */
    channels,
    /** The chosen instance's channels. */
    instanceChannels: channels.filter((c) => String(c.instanceId) === scope.instanceId),
  };
}

export type ScopeChoices = ReturnType<typeof useScopeChoices>;
