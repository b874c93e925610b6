// Alert rules: the list, and a form that previews "would have fired at …" before saving. The
// form's values and bodies are viewmodels/ruleForm.ts; the scope is the shared ScopePicker.
import { Fragment, useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { ALERT_METRICS, type AlertMetric } from "../../api/metrics";
import {
  useAlertRules,
  useCreateAlertRule,
  useDeleteAlertRule,
  usePreviewAlertRule,
  usePreviewEditedAlertRule,
  useUpdateAlertRule,
} from "../../hooks/useAlertRules";
import { useScopeChoices } from "../../hooks/useScopeChoices";
import { useWebhooks } from "../../hooks/useWebhooks";
import { formatDateTime } from "../../format/format";
import { ruleCondition } from "../../viewmodels/alerts";
import {
  NULL_POLICIES,
  ruleBody,
  ruleFormValues,
  rulePatch,
  ruleProblems,
  SEVERITIES,
  withTarget,
  type NullPolicy,
  type RuleFormValues,
  type Severity,
} from "../../viewmodels/ruleForm";
import { NumberField } from "../NumberField";
import { Empty, Loading, ProblemView } from "../States";
import { RuleOverrides } from "./RuleOverrides";
import { ScopePicker } from "./ScopePicker";

type Rule = Schemas["RuleOut"];

/** Create a rule, or edit `rule` (every field; saved with PATCH). Both preview first. */
export function RuleForm({ rule, onDone }: { rule?: Rule; onDone?: () => void }) {
  const targets = useWebhooks();
  const create = useCreateAlertRule();
  const update = useUpdateAlertRule();
  const preview = usePreviewAlertRule();
  const previewEdit = usePreviewEditedAlertRule();
  const [values, setValues] = useState<RuleFormValues>(() => ruleFormValues(rule));
  const [problems, setProblems] = useState<string[]>([]);
  const choices = useScopeChoices(values.scope);
  const set = (change: Partial<RuleFormValues>) => setValues({ ...values, ...change });
  const what = rule ? `alert rule ${rule.name}` : "new alert rule";

  /** Checks first: false (and the problems said) when the API would refuse the values. */
  function checked(): boolean {
    const found = ruleProblems(values);
    setProblems(found);
    return found.length === 0;
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!checked()) return;
    if (rule) update.mutate({ id: rule.id, body: rulePatch(rule, values) }, { onSuccess: () => onDone?.() });
    // The next rule starts from this one's choices, with a new name.
    else create.mutate(ruleBody(values), { onSuccess: () => setValues((v) => ({ ...v, name: "" })) });
  }

  function runPreview() {
    if (!checked()) return;
    if (rule) previewEdit.mutate({ id: rule.id, body: rulePatch(rule, values) });
    else preview.mutate(ruleBody(values));
  }

  const saving = rule ? update : create;
  const previewed = rule ? previewEdit : preview;
  return (
    <form className="card annotation-form" onSubmit={submit} aria-label={rule ? `Edit ${what}` : "New alert rule"}>
      <h3>{rule ? `Edit rule ${rule.name}` : "New rule"}</h3>
      <div className="form-row">
        <label>
          Name
          <input value={values.name} onChange={(e) => set({ name: e.target.value })} required maxLength={128} />
        </label>
        <label>
          Metric
          <select value={values.metric} onChange={(e) => set({ metric: e.target.value as AlertMetric })}>
            {ALERT_METRICS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select value={values.severity} onChange={(e) => set({ severity: e.target.value as Severity })}>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <ScopePicker value={values.scope} choices={choices} onChange={(scope) => set({ scope })} />
      </div>
      <div className="form-row">
        <NumberField label="Threshold (above)" value={values.threshold} onChange={(threshold) => set({ threshold })} required />
        <NumberField label="For (s)" min={0} value={values.forS} onChange={(forS) => set({ forS })} required />
        <NumberField label="Resolve at or below (optional)" value={values.resolve} onChange={(resolve) => set({ resolve })} />
        <NumberField label="Keep firing (s)" min={0} value={values.keepFiring} onChange={(keepFiring) => set({ keepFiring })} />
        <NumberField label="Repeat every (s, optional)" min={60} value={values.repeat} onChange={(repeat) => set({ repeat })} />
        <label>
          When the value is unknown
          <select value={values.nullPolicy} onChange={(e) => set({ nullPolicy: e.target.value as NullPolicy })}>
            {NULL_POLICIES.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className="form-row">
        <label>
          Labels (key=value, …)
          <input value={values.labels} onChange={(e) => set({ labels: e.target.value })} />
        </label>
        {values.metric === "param_changed" ? (
          <label>
            Parameters to watch (comma-separated; empty: any)
            <input value={values.paramNames} onChange={(e) => set({ paramNames: e.target.value })} />
          </label>
        ) : null}
      </div>
      <RuleOverrides values={values} choices={choices} onChange={setValues} />
      <fieldset className="form-row">
        <legend>Send to</legend>
        {(targets.data ?? []).map((t) => (
          <label key={t.id} className="inline">
            <input
              type="checkbox"
              checked={values.targetIds.includes(t.id)}
              onChange={(e) => setValues(withTarget(values, t.id, e.target.checked))}
            />{" "}
            {t.name}
          </label>
        ))}
        {targets.data?.length === 0 ? <span className="muted small">no webhook targets yet</span> : null}
      </fieldset>
      {problems.length ? (
        <ul className="state state-error" role="alert" aria-label="Problems with the rule">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      ) : null}
      {saving.error ? <ProblemView error={saving.error} /> : null}
      {previewed.error ? <ProblemView error={previewed.error} /> : null}
      {previewed.data ? <Preview incidents={previewed.data.incidents} /> : null}
      <div className="form-actions">
        <button type="button" onClick={runPreview} disabled={previewed.isPending || !values.name}>
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

function Preview({ incidents }: { incidents: Schemas["PreviewOut"]["incidents"] }) {
  return (
    <div aria-label="Preview" className="muted small">
      {incidents.length === 0
        ? "Would not have fired in the last 24 h."
        : incidents.map((i) => (
            <div key={`${i.channel_id}-${i.fired_at}`}>
              Would have fired at {formatDateTime(Date.parse(i.fired_at))} on {i.instance}
              {i.resolved_at ? `, resolved at ${formatDateTime(Date.parse(i.resolved_at))}` : ", still firing"}
            </div>
          ))}
    </div>
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
