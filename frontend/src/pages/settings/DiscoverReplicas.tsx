// Settings → servers → Discover replicas: the cluster's source lists its replicas; each not yet
// monitored is one "Add" click away, with the login chosen once for the list. With the source's
// login, the operator ticks each address it may go to, and the dialog says where it will go. Hosts
// come from a server: they are shown as text, never as markup.
import { useEffect, useState } from "react";
import type { Schemas } from "../../api/client";
import { Loading, ProblemView } from "../../components/States";
import { useCreateInstance } from "../../hooks/useInventoryAdmin";
import { useAddDiscoveredReplica, useDiscoverReplicas } from "../../hooks/useDiscovery";
import {
  addRequest,
  discoveryRows,
  sourceLoginDestinations,
  sourceLoginLabel,
  type LoginChoice,
  type ProposalRow,
} from "../../viewmodels/discovery";

type Cluster = Schemas["ClusterOut"];

export function DiscoverReplicas({ cluster, onClose }: { cluster: Cluster; onClose: () => void }) {
  const discover = useDiscoverReplicas();
  const [login, setLogin] = useState<"source" | "other" | null>(null);
  const [user, setUser] = useState("");
  const [password, setPassword] = useState("");
  // Addresses the operator ticked as allowed to receive the source's login.
  const [confirmed, setConfirmed] = useState<string[]>([]);
  const { mutate } = discover;
  useEffect(() => mutate(cluster.id), [mutate, cluster.id]);

  const choice: LoginChoice =
    login === "source" ? { kind: "source" } : login === "other" ? { kind: "other", user, password } : null;
  const sourceLabel = sourceLoginLabel(cluster.instances);
  const idBase = `discover-${cluster.id}`;
  const rows = discover.data ? discoveryRows(discover.data, cluster.instances) : [];
  const ticked = confirmed.filter((a) => rows.some((r) => r.address === a && !r.monitoredAs));
  const toggle = (address: string, on: boolean) =>
    setConfirmed((now) => (on ? [...now.filter((a) => a !== address), address] : now.filter((a) => a !== address)));
  return (
    <section className="card instance-form" aria-label={`Discovered replicas of ${cluster.name}`}>
      <h3>Replicas of {cluster.name}</h3>
      {discover.isPending ? <Loading what="the source's replicas" /> : null}
      {discover.error ? <ProblemView error={discover.error} /> : null}
      {discover.data ? (
        <>
          <p className="small muted">
            Asked {discover.data.source} ({discover.data.flavor}) with its own login. Nothing is added until you click
            Add.
          </p>
          {discover.data.problems.map((p) => (
            <p key={p} className="small tone-warn" role="note">
              {p}
            </p>
          ))}
          <fieldset className="form-grid">
            <legend>Log in to an added replica with</legend>
            {sourceLabel ? (
              <label className="inline">
                <input type="radio" name={`${idBase}-login`} checked={login === "source"} onChange={() => setLogin("source")} />
                {sourceLabel}
              </label>
            ) : null}
            <label className="inline">
              <input type="radio" name={`${idBase}-login`} checked={login === "other"} onChange={() => setLogin("other")} />
              Another login
            </label>
            {login === "other" ? (
              <>
                <label>
                  User
                  <input value={user} onChange={(e) => setUser(e.target.value)} autoComplete="off" maxLength={128} />
                </label>
                <label>
                  Password
                  <input
                    type="password"
                    value={password}
                    onChange={(e) => setPassword(e.target.value)}
                    autoComplete="new-password"
                  />
                </label>
              </>
            ) : null}
          </fieldset>
          {login === "source" ? (
            <p className="small" role="status" aria-label="Where the source's login goes">
              {sourceLoginDestinations(cluster.instances, ticked)}
            </p>
          ) : null}
          {login === "other" ? (
            <p className="small" role="status" aria-label="Where the typed login goes">
              The user and password typed here go to each replica you add, at the port shown or given.
            </p>
          ) : null}
          <ProposalTable
            clusterId={cluster.id}
            rows={rows}
            login={choice}
            confirmed={ticked}
            onConfirm={toggle}
          />
        </>
      ) : null}
      <div className="form-actions">
        <button type="button" onClick={() => mutate(cluster.id)} disabled={discover.isPending}>
          Ask again
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </section>
  );
}

interface Confirmation {
  confirmed: readonly string[];
  onConfirm: (address: string, on: boolean) => void;
}

function ProposalTable({
  clusterId,
  rows,
  login,
  confirmed,
  onConfirm,
}: { clusterId: number; rows: ProposalRow[]; login: LoginChoice } & Confirmation) {
  if (rows.length === 0) return <p className="muted">The source reports no replicas.</p>;
  const withSource = login?.kind === "source";
  return (
    <table className="data-table">
      <thead>
        <tr>
          <th scope="col">Address</th>
          <th scope="col">Server id</th>
          <th scope="col">Seen as</th>
          <th scope="col">Name</th>
          {withSource ? <th scope="col">Source&apos;s login</th> : null}
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <ProposalLine
            key={row.key}
            clusterId={clusterId}
            row={row}
            login={login}
            confirmed={confirmed}
            onConfirm={onConfirm}
          />
        ))}
      </tbody>
    </table>
  );
}

function ProposalLine({
  clusterId,
  row,
  login,
  confirmed,
  onConfirm,
}: { clusterId: number; row: ProposalRow; login: LoginChoice } & Confirmation) {
  const [name, setName] = useState(row.suggestedName);
  const [port, setPort] = useState(row.port === null ? "" : String(row.port));
  const [problem, setProblem] = useState<string | null>(null);
  const withSource = useAddDiscoveredReplica();
  const withOther = useCreateInstance();
  const pending = withSource.isPending || withOther.isPending;
  const error = withSource.error ?? withOther.error;

  function add() {
    const request = addRequest(clusterId, row, name, port, login, confirmed);
    if (request.kind === "invalid") {
      setProblem(request.problem);
      return;
    }
    setProblem(null);
    if (request.kind === "source") withSource.mutate({ clusterId, body: request.body });
    else withOther.mutate(request.body);
  }

  return (
    <tr data-proposal={row.address ?? row.host}>
      <td className="num">
        {row.address ?? row.host}
        {row.port === null && login?.kind === "other" && !row.monitoredAs ? (
          <>
            :
            <input
              value={port}
              onChange={(e) => setPort(e.target.value)}
              inputMode="numeric"
              size={6}
              placeholder="port"
              aria-label={`Port of ${row.host}`}
            />
          </>
        ) : null}
        {row.port === null ? <span className="badge">port not reported</span> : null}
      </td>
      <td>{row.serverId ?? <span className="muted">unknown</span>}</td>
      <td>{row.seenAs}</td>
      <td>
        {row.monitoredAs ? (
          row.monitoredAs
        ) : (
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={128} aria-label={`Name for ${row.address ?? row.host}`} />
        )}
      </td>
      {login?.kind === "source" ? (
        <td>
          {row.monitoredAs ? null : row.address === null ? (
            <span className="small muted">not sent: port not reported</span>
          ) : (
            <label className="inline">
              <input
                type="checkbox"
                checked={confirmed.includes(row.address)}
                onChange={(e) => {
                  if (row.address === null) return;
                  setProblem(null);
                  onConfirm(row.address, e.target.checked);
                }}
              />
              send to {row.address}
            </label>
          )}
        </td>
      ) : null}
      <td>
        {row.monitoredAs ? (
          <span className="tone-ok">already monitored as {row.monitoredAs}</span>
        ) : (
          <button type="button" onClick={add} disabled={pending} aria-label={`Add ${row.address ?? row.host}`}>
            Add
          </button>
        )}
        {problem ? <p className="small tone-warn">{problem}</p> : null}
        {error && !row.monitoredAs ? <ProblemView error={error} /> : null}
      </td>
    </tr>
  );
}
