// Settings → servers → Discover replicas: the cluster's source lists its replicas; each not yet
// monitored is one "Add" click away, with the login chosen once for the list. Hosts come from a
// server: they are shown as text, never as markup.
import { useEffect, useState } from "react";
import type { Schemas } from "../../api/client";
import { Loading, ProblemView } from "../../components/States";
import { useCreateInstance } from "../../hooks/useInventoryAdmin";
import { useAddDiscoveredReplica, useDiscoverReplicas } from "../../hooks/useDiscovery";
import { addRequest, discoveryRows, sourceLoginLabel, type LoginChoice, type ProposalRow } from "../../viewmodels/discovery";

type Cluster = Schemas["ClusterOut"];

export function DiscoverReplicas({ cluster, onClose }: { cluster: Cluster; onClose: () => void }) {
  const discover = useDiscoverReplicas();
  const [login, setLogin] = useState<"source" | "other" | null>(null);
  const [user, setUser] = useState("");
  const [password, setPassword] = useState("");
  const { mutate } = discover;
  useEffect(() => mutate(cluster.id), [mutate, cluster.id]);

  const choice: LoginChoice =
    login === "source" ? { kind: "source" } : login === "other" ? { kind: "other", user, password } : null;
  const sourceLabel = sourceLoginLabel(cluster.instances);
  const idBase = `discover-${cluster.id}`;
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
          <ProposalTable clusterId={cluster.id} rows={discoveryRows(discover.data, cluster.instances)} login={choice} />
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

function ProposalTable({ clusterId, rows, login }: { clusterId: number; rows: ProposalRow[]; login: LoginChoice }) {
  if (rows.length === 0) return <p className="muted">The source reports no replicas.</p>;
  return (
    <table className="data-table">
      <thead>
        <tr>
          <th scope="col">Address</th>
          <th scope="col">Server id</th>
          <th scope="col">Seen as</th>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <ProposalLine key={row.key} clusterId={clusterId} row={row} login={login} />
        ))}
      </tbody>
    </table>
  );
}

function ProposalLine({ clusterId, row, login }: { clusterId: number; row: ProposalRow; login: LoginChoice }) {
  const [name, setName] = useState(row.suggestedName);
  const [port, setPort] = useState(String(row.port));
  const [problem, setProblem] = useState<string | null>(null);
  const withSource = useAddDiscoveredReplica();
  const withOther = useCreateInstance();
  const pending = withSource.isPending || withOther.isPending;
  const error = withSource.error ?? withOther.error;

  function add() {
    const request = addRequest(clusterId, row, name, port, login);
    if (request.kind === "invalid") {
      setProblem(request.problem);
      return;
    }
    setProblem(null);
    if (request.kind === "source") withSource.mutate({ clusterId, body: request.body });
    else withOther.mutate(request.body);
  }

  return (
    <tr data-proposal={`${row.host}:${row.port}`}>
      <td className="num">
        {row.host}:
        {row.portGuessed && !row.monitoredAs ? (
          <input
            value={port}
            onChange={(e) => setPort(e.target.value)}
            inputMode="numeric"
            size={6}
            aria-label={`Port of ${row.host}`}
          />
        ) : (
          row.port
        )}
        {row.portGuessed ? <span className="badge">port guessed</span> : null}
      </td>
      <td>{row.serverId ?? <span className="muted">unknown</span>}</td>
      <td>{row.seenAs}</td>
      <td>
        {row.monitoredAs ? (
          row.monitoredAs
        ) : (
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={128} aria-label={`Name for ${row.host}:${row.port}`} />
        )}
      </td>
      <td>
        {row.monitoredAs ? (
          <span className="tone-ok">already monitored as {row.monitoredAs}</span>
        ) : (
          <button type="button" onClick={add} disabled={pending} aria-label={`Add ${row.host}:${row.port}`}>
            Add
          </button>
        )}
        {problem ? <p className="small tone-warn">{problem}</p> : null}
        {error && !row.monitoredAs ? <ProblemView error={error} /> : null}
      </td>
    </tr>
  );
}
