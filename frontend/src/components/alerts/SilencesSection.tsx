// Silences: mute a cluster, an instance, a channel or a region (or everything) for a while,
// with a reason; end one early. The scope is picked as a rule's is (ScopePicker).
import { useState, type FormEvent } from "react";
import { useScopeChoices } from "../../hooks/useScopeChoices";
import { useCreateSilence, useExpireSilence, useSilences } from "../../hooks/useSilences";
import { formatDateTime } from "../../format/format";
import { silenceBody } from "../../viewmodels/alerts";
import { EVERYWHERE, scopeText } from "../../viewmodels/scope";
import { Empty, Loading, ProblemView } from "../States";
import { ScopePicker } from "./ScopePicker";

export function SilencesSection() {
  const silences = useSilences();
  const create = useCreateSilence();
  const expire = useExpireSilence();
  const [scope, setScope] = useState(EVERYWHERE);
  const choices = useScopeChoices(scope);
  const [hours, setHours] = useState("2");
  const [reason, setReason] = useState("");

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(silenceBody(scope, hours, reason, Date.now()), { onSuccess: () => setReason("") });
  }

  return (
    <>
      <form className="card annotation-form" onSubmit={submit} aria-label="New silence">
        <div className="form-row">
          <ScopePicker value={scope} choices={choices} onChange={setScope} />
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
              {scopeText(s, choices.clusters)} until {formatDateTime(Date.parse(s.ends_at))}: {s.reason}{" "}
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
