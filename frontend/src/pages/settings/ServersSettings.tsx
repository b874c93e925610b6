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
import {
  clusterCreate,
  clusterFormValues,
  clusterPatch,
  HEARTBEAT_MODES,
  type ClusterFormValues,
  type HeartbeatMode,
} from "../../viewmodels/clusterForm";
import { DiscoverReplicas } from "./DiscoverReplicas";
import { InstanceForm } from "./InstanceForm";

type Cluster = Schemas["ClusterOut"];

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
  const [values, setValues] = useState<ClusterFormValues>(() => clusterFormValues(cluster));
  const create = useCreateCluster();
  const update = useUpdateCluster();
  const idBase = `cluster-${cluster ? cluster.id : "new"}`;

  function set<K extends keyof ClusterFormValues>(field: K, value: ClusterFormValues[K]) {
    setValues((current) => ({ ...current, [field]: value }));
  }

  function save(event: FormEvent) {
    event.preventDefault();
    if (!cluster) {
      create.mutate(clusterCreate(values), { onSuccess: onDone });
      return;
    }
    const body = clusterPatch(cluster, values);
    // Nothing changed: nothing to send (an empty PATCH would only refresh the list).
    if (Object.keys(body).length === 0) onDone();
    else update.mutate({ id: cluster.id, body }, { onSuccess: onDone });
  }

  const label = cluster ? `Edit cluster ${cluster.name}` : "Add cluster";
  const heartbeatOn = values.mode !== "off";
  return (
    <form className="card instance-form" onSubmit={save} aria-label={label}>
      <h3>{label}</h3>
      <div className="form-grid">
        <label>
          Name
          <input value={values.name} onChange={(e) => set("name", e.target.value)} required maxLength={128} />
        </label>
        <label>
          Poll every (s)
          <input
            value={values.pollIntervalS}
            onChange={(e) => set("pollIntervalS", e.target.value)}
            inputMode="decimal"
            required
          />
        </label>
      </div>
      <fieldset className="form-grid" aria-describedby={`${idBase}-heartbeat`}>
        <legend>Heartbeat</legend>
        <label>
          Heartbeat
          <select value={values.mode} onChange={(e) => set("mode", e.target.value as HeartbeatMode)}>
            {HEARTBEAT_MODES.map((m) => (
              <option key={m.mode} value={m.mode}>
                {m.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Heartbeat schema
          <input
            value={values.schemaName}
            onChange={(e) => set("schemaName", e.target.value)}
            pattern="[A-Za-z0-9_]{1,64}"
            required
            disabled={!heartbeatOn}
          />
        </label>
        <label>
          Heartbeat table
          <input
            value={values.table}
            onChange={(e) => set("table", e.target.value)}
            pattern="[A-Za-z0-9_]{1,64}"
            required
            disabled={!heartbeatOn}
          />
        </label>
        <label>
          Heartbeat every (s)
          <input
            value={values.intervalS}
            onChange={(e) => set("intervalS", e.target.value)}
            inputMode="decimal"
            disabled={!heartbeatOn}
          />
        </label>
        <label>
          Heartbeat writer user
          <input
            value={values.user}
            onChange={(e) => set("user", e.target.value)}
            autoComplete="off"
            disabled={values.mode !== "lagscope"}
          />
        </label>
        <label>
          Heartbeat writer password
          <input
            type="password"
            value={values.password}
            onChange={(e) => set("password", e.target.value)}
            autoComplete="new-password"
            placeholder={cluster?.heartbeat.has_password ? "unchanged" : ""}
            disabled={values.mode !== "lagscope"}
          />
        </label>
      </fieldset>
      <p id={`${idBase}-heartbeat`} className="small muted">
        The table is read on every replica (e.g. percona.heartbeat for pt-heartbeat); &quot;every&quot; is how often
        it is written. Lagscope writes it only in mode &quot;written by Lagscope&quot;, with the writer&apos;s login.
        Only the fields you change are saved.
      </p>
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
  const [discovering, setDiscovering] = useState(false);
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
          {cluster.heartbeat.mode !== "off"
            ? ` (${cluster.heartbeat.schema_name}.${cluster.heartbeat.table}) every ${cluster.heartbeat.interval_s} s`
            : ""}
        </span>
        {cluster.heartbeat.problem ? (
          <p className="small tone-warn" role="note">
            Heartbeat writer not running: {cluster.heartbeat.problem}
          </p>
        ) : null}
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
      {discovering ? <DiscoverReplicas cluster={cluster} onClose={() => setDiscovering(false)} /> : null}
      {canEdit && form === null ? (
        <button type="button" onClick={() => setForm("new")}>
          Add instance to {cluster.name}
        </button>
      ) : null}
      {canEdit && !discovering && cluster.instances.some((i) => i.role === "source") ? (
        <button type="button" onClick={() => setDiscovering(true)}>
          Discover replicas
        </button>
      ) : null}
    </section>
  );
}
