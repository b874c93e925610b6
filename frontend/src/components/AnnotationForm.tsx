import { useState, type FormEvent } from "react";
import { formatDateTime } from "../format/format";
import { parseTags } from "../viewmodels/annotations";
import { ProblemView } from "./States";

export interface ScopeOption {
  value: string; // "cluster" | "i<id>" | "c<id>"
  label: string;
}

interface Props {
  startsMs: number;
  endsMs: number | null;
  scopes: readonly ScopeOption[];
  initial?: { text: string; tags: string[]; scope: string };
  title: string;
  pending: boolean;
  error: unknown;
  onSubmit: (value: { text: string; tags: string[]; scope: string }) => void;
  onCancel: () => void;
}

/** The small form a click or a drag on the chart opens: text, tags, scope. */
export function AnnotationForm({ startsMs, endsMs, scopes, initial, title, pending, error, onSubmit, onCancel }: Props) {
  const [text, setText] = useState(initial?.text ?? "");
  const [tags, setTags] = useState(initial?.tags.join(", ") ?? "");
  const [scope, setScope] = useState(initial?.scope ?? "cluster");

  function submit(event: FormEvent) {
    event.preventDefault();
    onSubmit({ text, tags: parseTags(tags), scope });
  }

  return (
    <form className="card annotation-form" onSubmit={submit} aria-label={title} onKeyDown={(e) => e.key === "Escape" && onCancel()}>
      <h3>{title}</h3>
      <p className="muted small">
        {endsMs === null ? `at ${formatDateTime(startsMs)}` : `from ${formatDateTime(startsMs)} to ${formatDateTime(endsMs)}`}
      </p>
      <label>
        Text
        <textarea value={text} onChange={(e) => setText(e.target.value)} rows={2} required autoFocus maxLength={4000} />
      </label>
      <div className="form-row">
        <label>
          Tags (comma-separated)
          <input value={tags} onChange={(e) => setTags(e.target.value)} placeholder="tuning, flush" />
        </label>
        <label>
          Scope
          <select value={scope} onChange={(e) => setScope(e.target.value)}>
            {scopes.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? <ProblemView error={error} /> : null}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "Saving…" : "Save annotation"}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
