// A labelled number input that keeps what is typed as text ("" = empty), with the browser's
// min and required checks.
export function NumberField({
  label,
  value,
  onChange,
  min,
  required,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  min?: number;
  required?: boolean;
}) {
  return (
    <label>
      {label}
      <input type="number" min={min} step="any" value={value} onChange={(e) => onChange(e.target.value)} required={required} />
    </label>
  );
}
