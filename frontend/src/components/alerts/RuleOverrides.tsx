// An alert rule's per-replica overrides: a bound, a wait, or "leave out" for one replica (any
// instance the scope lists) or one channel (of the chosen cluster).
import type { ScopeChoices } from "../../hooks/useScopeChoices";
import { newOverride, withoutOverride, withOverride, type RuleFormValues } from "../../viewmodels/ruleForm";
import { NumberField } from "../NumberField";

export function RuleOverrides({
  values,
  choices,
  onChange,
}: {
  values: RuleFormValues;
  choices: ScopeChoices;
  onChange: (values: RuleFormValues) => void;
}) {
  const { instances, channels } = choices;
  const clusterId = values.scope.clusterId;
  const add = (kind: "instance" | "channel") => onChange({ ...values, overrides: [...values.overrides, newOverride(kind)] });
  return (
    <fieldset className="form-row">
      <legend>Per-replica overrides</legend>
      {values.overrides.map((o, index) => {
        const change = (c: Parameters<typeof withOverride>[2]) => onChange(withOverride(values, index, c));
        return (
          <div key={index} className="form-row" role="group" aria-label={`Override ${index + 1}`}>
            {o.kind === "channel" ? (
              <label>
                Channel
                <select value={o.channelId} onChange={(e) => change({ channelId: e.target.value })}>
                  <option value="">choose…</option>
                  {channels.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.label}
                    </option>
                  ))}
                  {o.channelId && !channels.some((c) => String(c.id) === o.channelId) ? (
                    <option value={o.channelId}>channel #{o.channelId}</option>
                  ) : null}
                </select>
              </label>
            ) : (
              <label>
                Replica
                <select value={o.instanceId} onChange={(e) => change({ instanceId: e.target.value })}>
                  <option value="">choose…</option>
                  {instances.map((i) => (
                    <option key={i.id} value={i.id}>
                      {i.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <NumberField label="Its bound" value={o.threshold} onChange={(threshold) => change({ threshold })} />
            <NumberField label="Its wait (s)" min={0} value={o.forS} onChange={(forS) => change({ forS })} />
            <label className="inline">
              <input type="checkbox" checked={!o.enabled} onChange={(e) => change({ enabled: !e.target.checked })} /> leave out
            </label>
            <button type="button" className="link" onClick={() => onChange(withoutOverride(values, index))}>
              Remove
            </button>
          </div>
        );
      })}
      <button type="button" className="link" onClick={() => add("instance")}>
        Add override
      </button>
      <button
        type="button"
        className="link"
        disabled={!clusterId}
        title={clusterId ? undefined : "choose a cluster to list its channels"}
        onClick={() => add("channel")}
      >
        Add channel override
      </button>
      {!clusterId ? <span className="muted small">Channel overrides: choose a cluster first.</span> : null}
    </fieldset>
  );
}
