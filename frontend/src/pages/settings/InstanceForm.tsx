// Add or edit an instance: test the connection first (flavor, privileges with the GRANT to run,
// channels), then save. The password is write-only: it is never shown again, never sent unless
// typed, and asked for again where the API will not keep the stored one (a new address, weaker
// TLS, another CA bundle, another pinned public key).
import { useState, type FormEvent } from "react";
import type { Schemas } from "../../api/client";
import { ConnectionReport } from "../../components/ConnectionReport";
import { ProblemView } from "../../components/States";
import { useConnectionTest, useCreateInstance, useUpdateInstance } from "../../hooks/useInventoryAdmin";
import { buildConnectionReport } from "../../viewmodels/connectionTest";
import {
  connectionTestBody,
  instanceCreate,
  instanceFormValues,
  instancePatch,
  passwordReasons,
  TLS_MODES,
  verifies,
  type InstanceFormValues,
  type Role,
  type TlsMode,
} from "../../viewmodels/instanceForm";

interface Props {
  clusterId: number;
  instance?: Schemas["InstanceOut"];
  onDone: () => void;
}

export function InstanceForm({ clusterId, instance, onDone }: Props) {
  const [values, setValues] = useState<InstanceFormValues>(() => instanceFormValues(instance));
  const test = useConnectionTest();
  const create = useCreateInstance();
  const update = useUpdateInstance();
  const saving = create.isPending || update.isPending;
  const reasons = instance ? passwordReasons(instance, values) : [];
  const passwordNeeded = reasons.length > 0 && !values.noPassword;
  const idBase = `instance-${instance ? instance.id : `new-${clusterId}`}`;
  const tlsExplained = TLS_MODES.find((m) => m.mode === values.tls)?.explain ?? "";

  function set<K extends keyof InstanceFormValues>(field: K, value: InstanceFormValues[K]) {
    setValues((current) => ({ ...current, [field]: value }));
  }

  function save(event: FormEvent) {
    event.preventDefault();
    const done = { onSuccess: onDone };
    if (instance) update.mutate({ id: instance.id, body: instancePatch(instance, values) }, done);
    else create.mutate(instanceCreate(clusterId, values), done);
  }

  const label = instance ? `Edit instance ${instance.name}` : "Add instance";
  return (
    <form className="card instance-form" onSubmit={save} aria-label={label}>
      <h3>{label}</h3>
      <div className="form-grid">
        <label>
          Name
          <input value={values.name} onChange={(e) => set("name", e.target.value)} required maxLength={128} />
        </label>
        <label>
          Host
          <input value={values.host} onChange={(e) => set("host", e.target.value)} required />
        </label>
        <label>
          Port
          <input
            value={values.port}
            onChange={(e) => set("port", e.target.value)}
            inputMode="numeric"
            pattern="\d+"
            required
          />
        </label>
        <label>
          Monitoring user
          <input value={values.user} onChange={(e) => set("user", e.target.value)} required autoComplete="off" />
        </label>
        <label>
          Password
          <input
            type="password"
            value={values.password}
            onChange={(e) => set("password", e.target.value)}
            autoComplete="new-password"
            required={passwordNeeded}
            disabled={values.noPassword}
            aria-describedby={instance ? `${idBase}-password` : undefined}
            placeholder={passwordNeeded ? "required" : instance?.has_password ? "unchanged" : ""}
          />
        </label>
        {instance ? null : (
          <label>
            Role
            <select value={values.role} onChange={(e) => set("role", e.target.value as Role)}>
              <option value="replica">replica</option>
              <option value="source">source</option>
            </select>
          </label>
        )}
        <label>
          Region
          <input
            value={values.region}
            onChange={(e) => set("region", e.target.value)}
            maxLength={64}
            placeholder="e.g. beijing"
          />
        </label>
        <label>
          TLS
          <select
            value={values.tls}
            onChange={(e) => set("tls", e.target.value as TlsMode)}
            aria-describedby={`${idBase}-tls`}
          >
            {TLS_MODES.map((m) => (
              <option key={m.mode} value={m.mode}>
                {m.mode}
              </option>
            ))}
          </select>
        </label>
        {verifies(values.tls) ? (
          <label>
            CA bundle path
            <input
              value={values.tlsCaPath}
              onChange={(e) => set("tlsCaPath", e.target.value)}
              maxLength={1024}
              placeholder="empty: the system's CAs"
              aria-describedby={`${idBase}-ca`}
            />
          </label>
        ) : null}
        {values.tls === "preferred" ? (
          <label>
            Server public key path
            <input
              value={values.publicKeyPath}
              onChange={(e) => set("publicKeyPath", e.target.value)}
              maxLength={1024}
              placeholder="empty: none pinned"
              aria-describedby={`${idBase}-key`}
            />
          </label>
        ) : null}
      </div>
      <p id={`${idBase}-tls`} className="small muted">
        TLS {values.tls}: {tlsExplained}
      </p>
      {verifies(values.tls) ? (
        <p id={`${idBase}-ca`} className="small muted">
          The CA bundle is a PEM file on the workers&apos; machines, an absolute path inside the directory
          LAGSCOPE_TLS_CA_DIR names.
        </p>
      ) : null}
      {values.tls === "preferred" ? (
        <p id={`${idBase}-key`} className="small muted">
          A sha256_password or caching_sha2_password login that needs the password itself gets it only inside
          verified TLS, or without TLS encrypted with the server&apos;s RSA public key pinned here (a PEM file inside
          LAGSCOPE_TLS_CA_DIR); never with a key the server sends.
        </p>
      ) : null}
      {instance ? (
        <div id={`${idBase}-password`} className="small">
          {reasons.length > 0 ? (
            <>
              <p className="tone-warn">
                Password required — {reasons.join("; ")}.
              </p>
              <label className="inline">
                <input
                  type="checkbox"
                  checked={values.noPassword}
                  onChange={(e) => set("noPassword", e.target.checked)}
                />{" "}
                the account has no password
              </label>
            </>
          ) : (
            <p className="muted">
              Leave the password empty to keep the stored one. Changing host, port or user, lowering TLS or
              changing the CA bundle needs it again.
            </p>
          )}
        </div>
      ) : null}
      <div className="form-actions">
        <button
          type="button"
          onClick={() => test.mutate(connectionTestBody(values, instance))}
          disabled={test.isPending || !values.host || !values.user}
        >
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
      {test.data ? <ConnectionReport report={buildConnectionReport(test.data, values.user)} /> : null}
      {create.error || update.error ? <ProblemView error={create.error ?? update.error} /> : null}
    </form>
  );
}
