// Webhook targets (the secret and the URL are write-only: the list shows the URL's scheme, host and
// a fingerprint; a URL is changed by re-entering it), "send test", and the delivery log.
import { useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import {
  useCreateWebhook,
  useDeliveries,
  useSendTestWebhook,
  useUpdateWebhook,
  useWebhooks,
} from "../../hooks/useWebhooks";
import { WEBHOOK_KINDS, deliveryRow, webhookKindLabel, webhookUrlText } from "../../viewmodels/alerts";
import { Empty, Loading, ProblemView } from "../States";

type Kind = Schemas["WebhookIn"]["kind"];

function KindSelect({ value, onChange }: { value: Kind; onChange: (kind: Kind) => void }) {
  return (
    <label>
      Format
      <select value={value} onChange={(e) => onChange(e.target.value as Kind)}>
        {WEBHOOK_KINDS.map((k) => (
          <option key={k.value} value={k.value}>
            {k.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function urlLabel(kind: Kind): string {
  return kind === "alertmanager_api" ? "Alertmanager URL (e.g. http://alertmanager:9093)" : "URL";
}

export function WebhookForm() {
  const create = useCreateWebhook();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Schemas["WebhookIn"]["kind"]>("generic");
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [includeStatements, setIncludeStatements] = useState(false);

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { name, kind, url, secret: secret || null, enabled: true, include_statements: includeStatements },
      { onSuccess: () => (setName(""), setUrl(""), setSecret(""), setIncludeStatements(false)) },
    );
  }

  return (
    <form className="card annotation-form" onSubmit={submit} aria-label="New webhook target">
      <div className="form-row">
        <label>
          Target name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <KindSelect value={kind} onChange={setKind} />
      </div>
      <div className="form-row">
        <label>
          {urlLabel(kind)} (never shown again)
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required />
        </label>
        <label>
          Signing secret (optional, never shown again)
          <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="off" />
        </label>
      </div>
      <div className="form-row">
        <label>
          <input
            type="checkbox"
            checked={includeStatements}
            onChange={(e) => setIncludeStatements(e.target.checked)}
          />{" "}
          Quote the servers&apos; text in the causes (statement digests, error messages); off: each quote is sent as
          “…”
        </label>
      </div>
      {create.error ? <ProblemView error={create.error} /> : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Add target
        </button>
      </div>
    </form>
  );
}

/** Re-enter a target's URL (the stored one is never shown) and, with it, its format. */
function WebhookUrlForm({ target, onDone }: { target: Schemas["WebhookOut"]; onDone: () => void }) {
  const update = useUpdateWebhook();
  const [kind, setKind] = useState<Kind>(target.kind as Kind);
  const [url, setUrl] = useState("");

  function submit(event: FormEvent) {
    event.preventDefault();
    update.mutate({ id: target.id, body: { url, kind } }, { onSuccess: onDone });
  }

  return (
    <form className="card annotation-form" onSubmit={submit} aria-label={`Change URL of ${target.name}`}>
      <div className="form-row">
        <KindSelect value={kind} onChange={setKind} />
        <label>
          New {urlLabel(kind)} (re-enter the whole URL)
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required />
        </label>
      </div>
      {update.error ? <ProblemView error={update.error} /> : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={update.isPending}>
          Save URL
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function WebhookList() {
  const targets = useWebhooks();
  const test = useSendTestWebhook();
  const [editing, setEditing] = useState<number | null>(null);
  if (targets.isPending) return <Loading what="webhook targets" />;
  if (targets.error) return <ProblemView error={targets.error} what="webhook targets" />;
  if (targets.data.length === 0) return <Empty>No webhook targets yet.</Empty>;
  const edited = targets.data.find((t) => t.id === editing);
  return (
    <>
      <ul aria-label="Webhook targets">
        {targets.data.map((t) => (
          <li key={t.id}>
            <strong>{t.name}</strong> <span className="badge">{webhookKindLabel(t.kind)}</span>{" "}
            <code title="The URL's scheme, host and port, and a fingerprint of the whole URL (it changes when the URL does)">
              {webhookUrlText(t)}
            </code>{" "}
            {t.has_secret ? <span className="muted small">signed</span> : null}{" "}
            {t.include_statements ? <span className="muted small">quotes server text</span> : null}{" "}
            <button type="button" onClick={() => test.mutate(t.id)} disabled={test.isPending}>
              Send test to {t.name}
            </button>{" "}
            <button type="button" onClick={() => setEditing(t.id)}>
              Change URL of {t.name}
            </button>
          </li>
        ))}
      </ul>
      {edited ? <WebhookUrlForm key={edited.id} target={edited} onDone={() => setEditing(null)} /> : null}
      {test.data ? (
        <p role="status">
          Test {test.data.status}
          {test.data.last_error ? `: ${test.data.last_error}` : ""}
        </p>
      ) : null}
      {test.error ? <ProblemView error={test.error} /> : null}
    </>
  );
}

export function DeliveryLog() {
  const deliveries = useDeliveries();
  const targets = useWebhooks();
  if (deliveries.isPending) return <Loading what="deliveries" />;
  if (deliveries.error) return <ProblemView error={deliveries.error} what="deliveries" />;
  if (deliveries.data.length === 0) return <Empty>Nothing sent yet.</Empty>;
  const rows = deliveries.data.map((d) => deliveryRow(d, targets.data ?? []));
  const hidden = deliveries.data.some((d) => d.detail_hidden);
  return (
    <div className="table-scroll">
      {hidden ? (
        <p className="muted small">
          Errors without an HTTP answer (name resolution, connection, TLS) are shown in detail to admins only.
        </p>
      ) : null}
      <table className="journal" aria-label="Delivery log">
        <thead>
          <tr>
            <th>Target</th>
            <th>Notification</th>
            <th>Status</th>
            <th>Attempts</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td>{r.target}</td>
              <td>{r.kind}</td>
              <td>{r.status}</td>
              <td>{r.attempts}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
