// Add or edit an instance: test the connection first (flavor, privileges with the GRANT to run,
// channels), then save. The password is write-only: it is never shown again.
import { useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { ConnectionReport } from "../../components/ConnectionReport";
import { ProblemView } from "../../components/States";
import { useConnectionTest, useCreateInstance, useUpdateInstance } from "../../hooks/useInventoryAdmin";
import { buildConnectionReport } from "../../viewmodels/connectionTest";

interface Props {
  clusterId: number;
  instance?: Schemas["InstanceOut"];
  onDone: () => void;
}

export function InstanceForm({ clusterId, instance, onDone }: Props) {
  const [name, setName] = useState(instance?.name ?? "");
  const [host, setHost] = useState(instance?.host ?? "127.0.0.1");
  const [port, setPort] = useState(String(instance?.port ?? 3306));
  const [user, setUser] = useState(instance?.user ?? "");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<"source" | "replica">(instance?.role ?? "replica");
  const [region, setRegion] = useState(instance?.region ?? "");
  const test = useConnectionTest();
  const create = useCreateInstance();
  const update = useUpdateInstance();
  const saving = create.isPending || update.isPending;

  function runTest() {
    test.mutate({ host, port: Number(port), user, password });
  }

  function save(event: FormEvent) {
    event.preventDefault();
    const done = { onSuccess: onDone };
    if (instance) {
      const moved = host !== instance.host || Number(port) !== instance.port || user !== instance.user;
      update.mutate(
        {
          id: instance.id,
          body: { name, host, port: Number(port), user, region, ...(password || moved ? { password } : {}) },
        },
        done,
      );
    } else {
      create.mutate({ cluster_id: clusterId, name, host, port: Number(port), user, password, role, region }, done);
    }
  }

  const label = instance ? `Edit instance ${instance.name}` : "Add instance";
  return (
    <form className="card instance-form" onSubmit={save} aria-label={label}>
      <h3>{label}</h3>
      <div className="form-grid">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <label>
          Host
          <input value={host} onChange={(e) => setHost(e.target.value)} required />
        </label>
        <label>
          Port
          <input value={port} onChange={(e) => setPort(e.target.value)} inputMode="numeric" pattern="\d+" required />
        </label>
        <label>
          Monitoring user
          <input value={user} onChange={(e) => setUser(e.target.value)} required autoComplete="off" />
        </label>
        <label>
          Password
          <input
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete="new-password"
            placeholder={instance?.has_password ? "unchanged" : ""}
          />
        </label>
        {instance ? null : (
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.target.value as "source" | "replica")}>
              <option value="replica">replica</option>
              <option value="source">source</option>
            </select>
          </label>
        )}
        <label>
          Region
          <input value={region} onChange={(e) => setRegion(e.target.value)} maxLength={64} placeholder="e.g. beijing" />
        </label>
      </div>
      {instance ? (
        <p className="small muted">Changing host, port or user needs the password again.</p>
      ) : null}
      <div className="form-actions">
        <button type="button" onClick={runTest} disabled={test.isPending || !host || !user}>
          {test.isPending ? "Testing…" : "Test connection"}
        </button>
        <button type="submit" className="primary" disabled={saving}>
          {saving ? "Saving…" : "Save instance"}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      {test.error ? <ProblemView error={test.error} what="a connection" /> : null}
      {test.data ? <ConnectionReport report={buildConnectionReport(test.data, user)} /> : null}
      {create.error || update.error ? <ProblemView error={create.error ?? update.error} /> : null}
    </form>
  );
}
