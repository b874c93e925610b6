// Settings → servers: clusters and their instances (add, edit, disable, delete), heartbeat.
import { useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { Empty, Loading, ProblemView } from "../../components/States";
import { useClusters } from "../../hooks/useClusters";
import {
  useCreateCluster,
  useDeleteCluster,
  useDeleteInstance,
  useUpdateCluster,
  useUpdateInstance,
} from "../../hooks/useInventoryAdmin";
import { InstanceForm } from "./InstanceForm";

type Cluster = Schemas["ClusterOut"];
type HeartbeatMode = Schemas["HeartbeatIn"]["mode"];

export function ServersSettings({ canEdit }: { canEdit: boolean }) {
  const clusters = useClusters();
  const [adding, setAdding] = useState(false);
  if (clusters.isPending) return <Loading what="clusters" />;
  if (clusters.error) return <ProblemView error={clusters.error} what="clusters" />;
  return (
    <div className="settings-section">
      {!canEdit ? <p className="muted">Viewers see the servers; editors and admins change them.</p> : null}
      {clusters.data.length === 0 ? <Empty>No clusters yet.</Empty> : null}
      {clusters.data.map((c) => (
        <ClusterAdmin key={c.id} cluster={c} canEdit={canEdit} />
      ))}
      {canEdit ? (
        adding ? (
          <ClusterForm onDone={() => setAdding(false)} />
        ) : (
          <button type="button" onClick={() => setAdding(true)}>
            Add cluster
          </button>
        )
      ) : null}
    </div>
  );
}

function ClusterForm({ cluster, onDone }: { cluster?: Cluster; onDone: () => void }) {
  const [name, setName] = useState(cluster?.name ?? "");
  const [poll, setPoll] = useState(String(cluster?.poll_interval_s ?? 1));
  const [mode, setMode] = useState<HeartbeatMode>(cluster?.heartbeat.mode ?? "off");
  const [interval, setInterval] = useState(String(cluster?.heartbeat.interval_s ?? 0.25));
  const [hbUser, setHbUser] = useState(cluster?.heartbeat.user ?? "");
  const [hbPassword, setHbPassword] = useState("");
  const create = useCreateCluster();
  const update = useUpdateCluster();

  function save(event: FormEvent) {
    event.preventDefault();
    const heartbeat = {
      mode,
      interval_s: Number(interval),
      ...(hbUser ? { user: hbUser } : {}),
      ...(hbPassword ? { password: hbPassword } : {}),
    };
    const body = { name, poll_interval_s: Number(poll), heartbeat };
    if (cluster) update.mutate({ id: cluster.id, body }, { onSuccess: onDone });
    else create.mutate(body, { onSuccess: onDone });
  }

  const label = cluster ? `Edit cluster ${cluster.name}` : "Add cluster";
  return (
    <form className="card instance-form" onSubmit={save} aria-label={label}>
      <h3>{label}</h3>
      <div className="form-grid">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <label>
          Poll every (s)
          <input value={poll} onChange={(e) => setPoll(e.target.value)} inputMode="decimal" required />
        </label>
        <label>
          Heartbeat
          <select value={mode} onChange={(e) => setMode(e.target.value as HeartbeatMode)}>
            <option value="off">off (lag from the source timeline / server)</option>
            <option value="lagscope">written by Lagscope</option>
            <option value="pt-heartbeat">pt-heartbeat</option>
          </select>
        </label>
        <label>
          Heartbeat every (s)
          <input value={interval} onChange={(e) => setInterval(e.target.value)} inputMode="decimal" />
        </label>
        <label>
          Heartbeat writer user
          <input value={hbUser} onChange={(e) => setHbUser(e.target.value)} autoComplete="off" />
        </label>
        <label>
          Heartbeat writer password
          <input
            type="password"
            value={hbPassword}
            onChange={(e) => setHbPassword(e.target.value)}
            autoComplete="new-password"
            placeholder={cluster?.heartbeat.has_password ? "unchanged" : ""}
          />
        </label>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.isPending || update.isPending}>
          Save cluster
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      {create.error || update.error ? <ProblemView error={create.error ?? update.error} /> : null}
    </form>
  );
}

function ClusterAdmin({ cluster, canEdit }: { cluster: Cluster; canEdit: boolean }) {
  const [editing, setEditing] = useState(false);
  const [form, setForm] = useState<"new" | number | null>(null);
  const [confirm, setConfirm] = useState<"cluster" | number | null>(null);
  const update = useUpdateCluster();
  const remove = useDeleteCluster();
  const updateInstance = useUpdateInstance();
  const removeInstance = useDeleteInstance();
  const error = update.error ?? remove.error ?? updateInstance.error ?? removeInstance.error;

  return (
    <section className="card cluster-admin" aria-label={`cluster ${cluster.name}`}>
      <header className="card-head">
        <h2>{cluster.name}</h2>
        {!cluster.enabled ? <span className="badge">disabled</span> : null}
        <span className="muted small">
          polled every {cluster.poll_interval_s} s · heartbeat {cluster.heartbeat.mode}
          {cluster.heartbeat.mode !== "off" ? ` every ${cluster.heartbeat.interval_s} s` : ""}
        </span>
        {canEdit ? (
          <span className="row-actions">
            <button type="button" onClick={() => setEditing(!editing)}>
              Edit
            </button>
            <button type="button" onClick={() => update.mutate({ id: cluster.id, body: { enabled: !cluster.enabled } })}>
              {cluster.enabled ? "Disable" : "Enable"}
            </button>
            {confirm === "cluster" ? (
              <>
                <button type="button" className="danger" onClick={() => remove.mutate(cluster.id)}>
                  Delete {cluster.name} and its history
                </button>
                <button type="button" onClick={() => setConfirm(null)}>
                  Keep
                </button>
              </>
            ) : (
              <button type="button" className="danger" onClick={() => setConfirm("cluster")}>
                Delete
              </button>
            )}
          </span>
        ) : null}
      </header>
      {editing ? <ClusterForm cluster={cluster} onDone={() => setEditing(false)} /> : null}
      {error ? <ProblemView error={error} /> : null}
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">Instance</th>
            <th scope="col">Address</th>
            <th scope="col">User</th>
            <th scope="col">Role</th>
            <th scope="col">Region</th>
            <th scope="col">Server</th>
            <th scope="col">Last poll</th>
            {canEdit ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {cluster.instances.map((i) => (
            <tr key={i.id} data-instance={i.name}>
              <td>
                <strong>{i.name}</strong> {!i.enabled ? <span className="badge">disabled</span> : null}
              </td>
              <td className="num">
                {i.host}:{i.port}
              </td>
              <td>{i.user}</td>
              <td>{i.role}</td>
              <td>{i.region}</td>
              <td>{i.flavor ? `${i.flavor} ${i.version ?? ""}` : <span className="muted">not polled yet</span>}</td>
              <td>
                {i.last_error ? (
                  <span className="tone-bad">
                    <span aria-hidden="true">⚠ </span>
                    {i.last_error}
                  </span>
                ) : i.last_ok_at ? (
                  <span className="tone-ok">ok</span>
                ) : (
                  <span className="muted">never</span>
                )}
              </td>
              {canEdit ? (
                <td className="row-actions">
                  <button type="button" className="link" onClick={() => setForm(i.id)} aria-label={`Edit ${i.name}`}>
                    Edit
                  </button>
                  <button
                    type="button"
                    className="link"
                    onClick={() => updateInstance.mutate({ id: i.id, body: { enabled: !i.enabled } })}
                    aria-label={`${i.enabled ? "Disable" : "Enable"} ${i.name}`}
                  >
                    {i.enabled ? "Disable" : "Enable"}
                  </button>
                  {confirm === i.id ? (
                    <button type="button" className="link danger" onClick={() => removeInstance.mutate(i.id)}>
                      Really delete {i.name}
                    </button>
                  ) : (
                    <button type="button" className="link danger" onClick={() => setConfirm(i.id)} aria-label={`Delete ${i.name}`}>
                      Delete
                    </button>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
      {typeof form === "number" ? (
        <InstanceForm
          key={form}
          clusterId={cluster.id}
          instance={cluster.instances.find((i) => i.id === form)}
          onDone={() => setForm(null)}
        />
      ) : null}
      {form === "new" ? <InstanceForm clusterId={cluster.id} onDone={() => setForm(null)} /> : null}
      {canEdit && form === null ? (
        <button type="button" onClick={() => setForm("new")}>
          Add instance to {cluster.name}
        </button>
      ) : null}
    </section>
  );
}
