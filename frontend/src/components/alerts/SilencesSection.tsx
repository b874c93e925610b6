// Silences: mute a cluster (or everything) for a while, with a reason; end one early.
import { useState, type FormEvent } from "react";
import { useClusters } from "../../hooks/useClusters";
import { useCreateSilence, useExpireSilence, useSilences } from "../../hooks/useSilences";
import { formatDateTime } from "../../format/format";
import { Empty, Loading, ProblemView } from "../States";

export function SilencesSection() {
  const silences = useSilences();
  const clusters = useClusters();
  const create = useCreateSilence();
  const expire = useExpireSilence();
  const [clusterId, setClusterId] = useState("");
  const [hours, setHours] = useState("2");
  const [reason, setReason] = useState("");

  function submit(event: FormEvent) {
    event.preventDefault();
    const ends = new Date(Date.now() + Number(hours) * 3_600_000).toISOString();
    create.mutate(
      { cluster_id: clusterId ? Number(clusterId) : null, ends_at: ends, reason },
      { onSuccess: () => setReason("") },
    );
  }

  return (
    <>
      <form className="card annotation-form" onSubmit={submit} aria-label="New silence">
        <div className="form-row">
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
          <label>
            For (hours)
            <input type="number" min={0.05} step="any" value={hours} onChange={(e) => setHours(e.target.value)} required />
          </label>
          <label>
            Reason
            <input value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={500} />
          </label>
        </div>
        {create.error ? <ProblemView error={create.error} /> : null}
        <div className="form-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Silence
          </button>
        </div>
      </form>
      {silences.isPending ? (
        <Loading what="silences" />
      ) : silences.error ? (
        <ProblemView error={silences.error} what="silences" />
      ) : silences.data.length === 0 ? (
        <Empty>No active silence.</Empty>
      ) : (
        <ul aria-label="Active silences">
          {silences.data.map((s) => (
            <li key={s.id}>
              until {formatDateTime(Date.parse(s.ends_at))}: {s.reason}{" "}
              <span className="muted small">by {s.author}</span>{" "}
              <button type="button" className="link" onClick={() => expire.mutate(s.id)}>
                End now
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
