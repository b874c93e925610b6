// What an alert rule or a silence applies to: cluster → instance → channel, and a region. One
// picker for both forms; it renders its labels into the form's row.
import type { ScopeChoices } from "../../hooks/useScopeChoices";
import { withCluster, withInstance, type ScopeValues } from "../../viewmodels/scope";

export function ScopePicker({
  value,
  choices,
  onChange,
}: {
  value: ScopeValues;
  choices: ScopeChoices;
  onChange: (next: ScopeValues) => void;
}) {
  const { clusters, instances, instanceChannels } = choices;
  const { channelId } = value;
  return (
    <>
      <label>
        Cluster
        <select value={value.clusterId} onChange={(e) => onChange(withCluster(value, e.target.value))}>
          <option value="">every cluster</option>
          {clusters.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Instance
        <select value={value.instanceId} onChange={(e) => onChange(withInstance(value, e.target.value))}>
          <option value="">every instance</option>
          {instances.map((i) => (
            <option key={i.id} value={i.id}>
              {i.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Channel
        <select
          value={channelId}
          onChange={(e) => onChange({ ...value, channelId: e.target.value })}
          disabled={!value.instanceId}
          title={value.instanceId ? undefined : "choose an instance to pick one of its channels"}
        >
          <option value="">every channel</option>
          {instanceChannels.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
          {channelId && !instanceChannels.some((c) => String(c.id) === channelId) ? (
            <option value={channelId}>channel #{channelId}</option>
          ) : null}
        </select>
      </label>
      <label>
        Region
        <input value={value.region} onChange={(e) => onChange({ ...value, region: e.target.value })} maxLength={64} placeholder="any" />
      </label>
    </>
  );
}
