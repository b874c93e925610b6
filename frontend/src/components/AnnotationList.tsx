import type { AnnotationMark } from "../viewmodels/annotations";

interface Props {
  marks: readonly AnnotationMark[];
  onEdit: (id: number) => void;
  onDelete: (id: number) => void;
}

/** The notes in the range, with who wrote them; edit and delete where allowed. */
export function AnnotationList({ marks, onEdit, onDelete }: Props) {
  if (marks.length === 0) return <p className="muted small">No annotations in this range. Click the chart to add one, or drag for a range.</p>;
  return (
    <ul className="annotation-list" aria-label="Annotations in this range">
      {marks.map((m) => (
        <li key={m.id} data-annotation={m.id} data-kind={m.kind}>
          <span className="ann-glyph" aria-hidden="true">
            {m.kind === "range" ? "▭" : "▲"}
          </span>
          <span className="ann-when num">{m.when}</span>
          <span className="ann-text">{m.text}</span>
          {m.tags.map((t) => (
            <span key={t} className="badge">
              {t}
            </span>
          ))}
          <span className="muted small">
            {m.author} · {m.scope}
          </span>
          {m.canEdit ? (
            <span className="ann-actions">
              <button type="button" className="link" onClick={() => onEdit(m.id)} aria-label={`Edit annotation: ${m.text}`}>
                Edit
              </button>
              <button type="button" className="link danger" onClick={() => onDelete(m.id)} aria-label={`Delete annotation: ${m.text}`}>
                Delete
              </button>
            </span>
          ) : null}
        </li>
      ))}
    </ul>
  );
}
