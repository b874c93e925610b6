// Alert rules: the list, and a form that previews "would have fired at …" before saving.
import { useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { useClusters } from "../../hooks/useClusters";
import { useAlertRules, useCreateAlertRule, useDeleteAlertRule, usePreviewAlertRule } from "../../hooks/useAlertRules";
import { useWebhooks } from "../../hooks/useWebhooks";
import { formatDateTime } from "../../format/format";
import { ruleCondition } from "../../viewmodels/alerts";
import { Empty, Loading, ProblemView } from "../States";

const METRICS: Schemas["RuleIn"]["metric"][] = [
  "lag", "trx_behind", "not_received", "received_not_applied", "io_stopped", "sql_stopped",
  "replication_error", "eta", "lag_disagreement", "unreachable", "credentials_problem",
  "param_changed", "clock_skew",
];

function optionalNumber(text: string): number | null {
  return text.trim() === "" ? null : Number(text);
}

export function RuleForm() {
  const clusters = useClusters();
  const targets = useWebhooks();
  const create = useCreateAlertRule();
  const preview = usePreviewAlertRule();
  const [name, setName] = useState("");
  const [metric, setMetric] = useState<Schemas["RuleIn"]["metric"]>("lag");
  const [threshold, setThreshold] = useState("30");
  const [forS, setForS] = useState("60");
  const [resolve, setResolve] = useState("");
  const [clusterId, setClusterId] = useState("");
  const [targetIds, setTargetIds] = useState<number[]>([]);
  const [severity, setSeverity] = useState<Schemas["RuleIn"]["severity"]>("warning");

  function body(): Schemas["RuleIn"] {
    return {
      name,
      metric,
      threshold: Number(threshold),
      for_s: Number(forS),
      resolve_threshold: optionalNumber(resolve),
      cluster_id: clusterId ? Number(clusterId) : null,
      target_ids: targetIds,
      severity,
      keep_firing_s: 0,
      null_policy: "firing_if_broken",
      enabled: true,
    };
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(body(), { onSuccess: () => setName("") });
  }

  return (
    <form className="card annotation-form" onSubmit={submit} aria-label="New alert rule">
      <h3>New rule</h3>
      <div className="form-row">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <label>
          Metric
          <select value={metric} onChange={(e) => setMetric(e.target.value as Schemas["RuleIn"]["metric"])}>
            {METRICS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select value={severity} onChange={(e) => setSeverity(e.target.value as Schemas["RuleIn"]["severity"])}>
            <option value="info">info</option>
            <option value="warning">warning</option>
            <option value="critical">critical</option>
          </select>
        </label>
        <label>
          Cluster
          <select value={clusterId} onChange={(e) => setClusterId(e.target.value)}>
            <option value="">every cluster</option>
            {(clusters.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
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
      </div>
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
      {create.error ? <ProblemView error={create.error} /> : null}
      {preview.error ? <ProblemView error={preview.error} /> : null}
      {preview.data ? (
        <div aria-label="Preview" className="muted small">
          {preview.data.incidents.length === 0
            ? "Would not have fired in the last 24 h."
            : preview.data.incidents.map((i) => (
                <div key={`${i.channel_id}-${i.fired_at}`}>
                  Would have fired at {formatDateTime(Date.parse(i.fired_at))} on {i.instance}
                  {i.resolved_at ? `, resolved at ${formatDateTime(Date.parse(i.resolved_at))}` : ", still firing"}
                </div>
              ))}
        </div>
      ) : null}
      <div className="form-actions">
        <button type="button" onClick={() => preview.mutate(body())} disabled={preview.isPending || !name}>
          {preview.isPending ? "Previewing…" : "Preview last 24 h"}
        </button>
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Saving…" : "Create rule"}
        </button>
      </div>
    </form>
  );
}

export function RuleList() {
  const rules = useAlertRules();
  const remove = useDeleteAlertRule();
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
            <tr key={r.id}>
              <td>{r.name}</td>
              <td>{ruleCondition(r)}</td>
              <td>{r.severity}</td>
              <td>{r.target_ids.length}</td>
              <td>
                <button type="button" className="link" onClick={() => remove.mutate(r.id)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
