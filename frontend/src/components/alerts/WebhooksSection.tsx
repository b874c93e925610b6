// Webhook targets (the secret is write-only), "send test", and the delivery log.
import { useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { useCreateWebhook, useDeliveries, useSendTestWebhook, useWebhooks } from "../../hooks/useWebhooks";
import { deliveryRow } from "../../viewmodels/alerts";
import { Empty, Loading, ProblemView } from "../States";

export function WebhookForm() {
  const create = useCreateWebhook();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Schemas["WebhookIn"]["kind"]>("generic");
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { name, kind, url, secret: secret || null, enabled: true },
      { onSuccess: () => (setName(""), setUrl(""), setSecret("")) },
    );
  }

  return (
    <form className="card annotation-form" onSubmit={submit} aria-label="New webhook target">
      <div className="form-row">
        <label>
          Target name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <label>
          Format
          <select value={kind} onChange={(e) => setKind(e.target.value as Schemas["WebhookIn"]["kind"])}>
            <option value="generic">generic JSON</option>
            <option value="alertmanager">Alertmanager</option>
            <option value="slack">Slack</option>
          </select>
        </label>
      </div>
      <div className="form-row">
        <label>
          URL
          <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required />
        </label>
        <label>
          Signing secret (optional, never shown again)
          <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="off" />
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

export function WebhookList() {
  const targets = useWebhooks();
  const test = useSendTestWebhook();
  if (targets.isPending) return <Loading what="webhook targets" />;
  if (targets.error) return <ProblemView error={targets.error} what="webhook targets" />;
  if (targets.data.length === 0) return <Empty>No webhook targets yet.</Empty>;
  return (
    <>
      <ul aria-label="Webhook targets">
        {targets.data.map((t) => (
          <li key={t.id}>
            <strong>{t.name}</strong> <span className="badge">{t.kind}</span> {t.url}{" "}
            {t.has_secret ? <span className="muted small">signed</span> : null}{" "}
            <button type="button" onClick={() => test.mutate(t.id)} disabled={test.isPending}>
              Send test to {t.name}
            </button>
          </li>
        ))}
      </ul>
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
  return (
    <div className="table-scroll">
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
