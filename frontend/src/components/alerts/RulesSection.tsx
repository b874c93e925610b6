// Alert rules: the list, and a form that previews "would have fired at …" before saving.
import { Fragment, useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { ALERT_METRICS as METRICS } from "../../api/enums";
import { useClusterChannels } from "../../hooks/useClusterChannels";
import { useClusters } from "../../hooks/useClusters";
import {
  useAlertRules,
  useCreateAlertRule,
  useDeleteAlertRule,
  usePreviewAlertRule,
  usePreviewEditedAlertRule,
  useUpdateAlertRule,
} from "../../hooks/useAlertRules";
import { useWebhooks } from "../../hooks/useWebhooks";
import { formatDateTime } from "../../format/format";
import { labelsText, parseLabels, ruleCondition } from "../../viewmodels/alerts";
import { scopeIds } from "../../viewmodels/ruleScope";
import { Empty, Loading, ProblemView } from "../States";

function optionalNumber(text: string): number | null {
  return text.trim() === "" ? null : Number(text);
}

function numberText(value: number | null | undefined): string {
  return value === null || value === undefined ? "" : String(value);
}

interface OverrideRow {
  /** An instance's override names it; a channel's names the channel (its instance follows). */
  kind: "instance" | "channel";
  instanceId: string;
  channelId: string;
  threshold: string;
  forS: string;
  enabled: boolean;
}

type Rule = Schemas["RuleOut"];
type RuleBody = Schemas["RuleIn"];

/** Create a rule, or edit `rule` (every field; saved with PATCH). Both preview first. */
export function RuleForm({ rule, onDone }: { rule?: Rule; onDone?: () => void }) {
  const clusters = useClusters();
  const targets = useWebhooks();
  const create = useCreateAlertRule();
  const update = useUpdateAlertRule();
  const preview = usePreviewAlertRule();
  const previewEdit = usePreviewEditedAlertRule();
  const [name, setName] = useState(rule?.name ?? "");
  const [metric, setMetric] = useState<RuleBody["metric"]>((rule?.metric as RuleBody["metric"]) ?? "lag");
  const [threshold, setThreshold] = useState(rule ? String(rule.threshold) : "30");
  const [forS, setForS] = useState(rule ? String(rule.for_s) : "60");
  const [resolve, setResolve] = useState(numberText(rule?.resolve_threshold));
  const [keepFiring, setKeepFiring] = useState(rule ? String(rule.keep_firing_s) : "0");
  const [repeat, setRepeat] = useState(numberText(rule?.repeat_s));
  const [clusterId, setClusterId] = useState(numberText(rule?.cluster_id));
  const [instanceId, setInstanceId] = useState(numberText(rule?.instance_id));
  const [channelId, setChannelId] = useState(numberText(rule?.channel_id));
  const [region, setRegion] = useState(rule?.region ?? "");
  const [targetIds, setTargetIds] = useState<number[]>(rule?.target_ids ?? []);
  const [severity, setSeverity] = useState<RuleBody["severity"]>((rule?.severity as RuleBody["severity"]) ?? "warning");
  const [labels, setLabels] = useState(labelsText(rule?.labels ?? {}));
  const [nullPolicy, setNullPolicy] = useState<RuleBody["null_policy"]>(
    (rule?.null_policy as RuleBody["null_policy"]) ?? "firing_if_broken",
  );
  const [paramNames, setParamNames] = useState((rule?.params.names ?? []).join(", "));
  const [overrides, setOverrides] = useState<OverrideRow[]>(
    (rule?.overrides ?? []).map((o) => ({
      kind: o.channel_id !== null && o.channel_id !== undefined ? "channel" : "instance",
      instanceId: numberText(o.instance_id),
      channelId: numberText(o.channel_id),
      threshold: numberText(o.threshold),
      forS: numberText(o.for_s),
      enabled: o.enabled ?? true,
    })),
  );
  const instances = (clusters.data ?? [])
    .filter((c) => !clusterId || String(c.id) === clusterId)
    .flatMap((c) => c.instances);
  // The chosen cluster's channels as last polled (a channel appears once its replica was read).
  // An instance chosen under "every cluster" still names its cluster.
  const channelCluster =
    clusterId || numberText((clusters.data ?? []).find((c) => c.instances.some((i) => String(i.id) === instanceId))?.id);
  const channels = useClusterChannels(channelCluster ? Number(channelCluster) : null);
  const clusterChannels = channels.data ?? [];
  const instanceChannels = clusterChannels.filter((c) => String(c.instanceId) === instanceId);
  const what = rule ? `alert rule ${rule.name}` : "new alert rule";

  function body(): RuleBody {
    return {
      name,
      metric,
      threshold: Number(threshold),
      for_s: Number(forS),
      resolve_threshold: optionalNumber(resolve),
      keep_firing_s: Number(keepFiring || "0"),
      repeat_s: optionalNumber(repeat),
      ...scopeIds(clusterId, instanceId, channelId),
      region: region.trim() || null,
      target_ids: targetIds,
      severity,
      labels: parseLabels(labels),
      null_policy: nullPolicy,
      params: {
        names: paramNames.split(",").map((n) => n.trim()).filter(Boolean),
        window_s: rule?.params.window_s ?? 600,
      },
      overrides: overrides
        .filter((o) => (o.kind === "channel" ? o.channelId : o.instanceId))
        .map((o) => ({
          instance_id: o.kind === "instance" ? Number(o.instanceId) : null,
          channel_id: o.kind === "channel" ? Number(o.channelId) : null,
          threshold: optionalNumber(o.threshold),
          for_s: optionalNumber(o.forS),
          enabled: o.enabled,
        })),
      enabled: rule?.enabled ?? true,
    };
  }

  function setOverride(index: number, change: Partial<OverrideRow>) {
    setOverrides(overrides.map((o, i) => (i === index ? { ...o, ...change } : o)));
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (rule) update.mutate({ id: rule.id, body: body() }, { onSuccess: () => onDone?.() });
    else create.mutate(body(), { onSuccess: () => setName("") });
  }

  function runPreview() {
    if (rule) previewEdit.mutate({ id: rule.id, body: body() });
    else preview.mutate(body());
  }

  const saving = rule ? update : create;
  const previewed = rule ? previewEdit : preview;
  return (
    <form className="card annotation-form" onSubmit={submit} aria-label={rule ? `Edit ${what}` : "New alert rule"}>
      <h3>{rule ? `Edit rule ${rule.name}` : "New rule"}</h3>
      <div className="form-row">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <label>
          Metric
          <select value={metric} onChange={(e) => setMetric(e.target.value as RuleBody["metric"])}>
            {METRICS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select value={severity} onChange={(e) => setSeverity(e.target.value as RuleBody["severity"])}>
            <option value="info">info</option>
            <option value="warning">warning</option>
            <option value="critical">critical</option>
          </select>
        </label>
        <label>
          Cluster
          <select
            value={clusterId}
            onChange={(e) => {
              setClusterId(e.target.value);
              setInstanceId("");
              setChannelId("");
            }}
          >
            <option value="">every cluster</option>
            {(clusters.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Instance
          <select
            value={instanceId}
            onChange={(e) => {
              setInstanceId(e.target.value);
              setChannelId("");
            }}
          >
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
            onChange={(e) => setChannelId(e.target.value)}
            disabled={!instanceId}
            title={instanceId ? undefined : "choose an instance to pick one of its channels"}
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
          <input value={region} onChange={(e) => setRegion(e.target.value)} maxLength={64} placeholder="any" />
        </label>
      </div>
      <div className="form-row">
        <label>
          Threshold (above)
          <input type="number" step="any" value={threshold} onChange={(e) => setThreshold(e.target.value)} required />
        </label>
        <label>
          For (s)
          <input type="number" min={0} step="any" value={forS} onChange={(e) => setForS(e.target.value)} required />
        </label>
        <label>
          Resolve at or below (optional)
          <input type="number" step="any" value={resolve} onChange={(e) => setResolve(e.target.value)} />
        </label>
        <label>
          Keep firing (s)
          <input type="number" min={0} step="any" value={keepFiring} onChange={(e) => setKeepFiring(e.target.value)} />
        </label>
        <label>
          Repeat every (s, optional)
          <input type="number" min={60} step="any" value={repeat} onChange={(e) => setRepeat(e.target.value)} />
        </label>
        <label>
          When the value is unknown
          <select value={nullPolicy} onChange={(e) => setNullPolicy(e.target.value as RuleBody["null_policy"])}>
            <option value="firing_if_broken">breach if SQL thread stopped or unreachable</option>
            <option value="firing">breach</option>
            <option value="keep">keep the last judgement</option>
            <option value="ok">fine</option>
          </select>
        </label>
      </div>
      <div className="form-row">
        <label>
          Labels (key=value, …)
          <input value={labels} onChange={(e) => setLabels(e.target.value)} />
        </label>
        {metric === "param_changed" ? (
          <label>
            Parameters to watch (comma-separated; empty: any)
            <input value={paramNames} onChange={(e) => setParamNames(e.target.value)} />
          </label>
        ) : null}
      </div>
      <fieldset className="form-row">
        <legend>Per-replica overrides</legend>
        {overrides.map((o, index) => (
          <div key={index} className="form-row" role="group" aria-label={`Override ${index + 1}`}>
            {o.kind === "channel" ? (
              <label>
                Channel
                <select value={o.channelId} onChange={(e) => setOverride(index, { channelId: e.target.value })}>
                  <option value="">choose…</option>
                  {clusterChannels.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.label}
                    </option>
                  ))}
                  {o.channelId && !clusterChannels.some((c) => String(c.id) === o.channelId) ? (
                    <option value={o.channelId}>channel #{o.channelId}</option>
                  ) : null}
                </select>
              </label>
            ) : (
              <label>
                Replica
                <select value={o.instanceId} onChange={(e) => setOverride(index, { instanceId: e.target.value })}>
                  <option value="">choose…</option>
                  {instances.map((i) => (
                    <option key={i.id} value={i.id}>
                      {i.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <label>
              Its bound
              <input type="number" step="any" value={o.threshold} onChange={(e) => setOverride(index, { threshold: e.target.value })} />
            </label>
            <label>
              Its wait (s)
              <input type="number" min={0} step="any" value={o.forS} onChange={(e) => setOverride(index, { forS: e.target.value })} />
            </label>
            <label className="inline">
              <input type="checkbox" checked={!o.enabled} onChange={(e) => setOverride(index, { enabled: !e.target.checked })} /> leave out
            </label>
            <button type="button" className="link" onClick={() => setOverrides(overrides.filter((_, i) => i !== index))}>
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          className="link"
          onClick={() =>
            setOverrides([
              ...overrides,
              { kind: "instance", instanceId: "", channelId: "", threshold: "", forS: "", enabled: true },
            ])
          }
        >
          Add override
        </button>
        <button
          type="button"
          className="link"
          disabled={!clusterId}
          title={clusterId ? undefined : "choose a cluster to list its channels"}
          onClick={() =>
            setOverrides([
              ...overrides,
              { kind: "channel", instanceId: "", channelId: "", threshold: "", forS: "", enabled: true },
            ])
          }
        >
          Add channel override
        </button>
        {!clusterId ? <span className="muted small">Channel overrides: choose a cluster first.</span> : null}
      </fieldset>
      <fieldset className="form-row">
        <legend>Send to</legend>
        {(targets.data ?? []).map((t) => (
          <label key={t.id} className="inline">
            <input
              type="checkbox"
              checked={targetIds.includes(t.id)}
              onChange={(e) =>
                setTargetIds(e.target.checked ? [...targetIds, t.id] : targetIds.filter((id) => id !== t.id))
              }
            />{" "}
            {t.name}
          </label>
        ))}
        {targets.data?.length === 0 ? <span className="muted small">no webhook targets yet</span> : null}
      </fieldset>
      {saving.error ? <ProblemView error={saving.error} /> : null}
      {previewed.error ? <ProblemView error={previewed.error} /> : null}
      {previewed.data ? (
        <div aria-label="Preview" className="muted small">
          {previewed.data.incidents.length === 0
            ? "Would not have fired in the last 24 h."
            : previewed.data.incidents.map((i) => (
                <div key={`${i.channel_id}-${i.fired_at}`}>
                  Would have fired at {formatDateTime(Date.parse(i.fired_at))} on {i.instance}
                  {i.resolved_at ? `, resolved at ${formatDateTime(Date.parse(i.resolved_at))}` : ", still firing"}
                </div>
              ))}
        </div>
      ) : null}
      <div className="form-actions">
        <button type="button" onClick={runPreview} disabled={previewed.isPending || !name}>
          {previewed.isPending ? "Previewing…" : "Preview last 24 h"}
        </button>
        {rule ? (
          <button type="button" onClick={() => onDone?.()}>
            Cancel
          </button>
        ) : null}
        <button type="submit" className="primary" disabled={saving.isPending}>
          {saving.isPending ? "Saving…" : rule ? "Save rule" : "Create rule"}
        </button>
      </div>
    </form>
  );
}

export function RuleList() {
  const rules = useAlertRules();
  const remove = useDeleteAlertRule();
  const [editing, setEditing] = useState<number | null>(null);
  if (rules.isPending) return <Loading what="alert rules" />;
  if (rules.error) return <ProblemView error={rules.error} what="alert rules" />;
  if (rules.data.length === 0) return <Empty>No alert rules yet.</Empty>;
  return (
    <div className="table-scroll">
      <table className="journal" aria-label="Alert rules">
        <thead>
          <tr>
            <th>Rule</th>
            <th>Condition</th>
            <th>Severity</th>
            <th>Targets</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rules.data.map((r) => (
            <Fragment key={r.id}>
              <tr>
                <td>{r.name}</td>
                <td>{ruleCondition(r)}</td>
                <td>{r.severity}</td>
                <td>{r.target_ids.length}</td>
                <td>
                  <button
                    type="button"
                    className="link"
                    aria-label={`Edit ${r.name}`}
                    onClick={() => setEditing(editing === r.id ? null : r.id)}
                  >
                    Edit
                  </button>{" "}
                  <button type="button" className="link" onClick={() => remove.mutate(r.id)}>
                    Delete
                  </button>
                </td>
              </tr>
              {editing === r.id ? (
                <tr>
                  <td colSpan={5}>
                    <RuleForm rule={r} onDone={() => setEditing(null)} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}
