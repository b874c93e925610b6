// The overview's filters: a search box (cluster or server name), region, state and cause. The
// URL holds them (the page passes them in and gets changes back); counts are over the fleet.
import type { FilterOption, FleetFilter, FleetOptions } from "../viewmodels/fleet";

interface Props {
  filter: FleetFilter;
  options: FleetOptions;
  shown: number;
  total: number;
  /** Only what changed: two changes in one frame must not undo each other. */
  onChange: (patch: Partial<FleetFilter>) => void;
}

export function FleetFilters({ filter, options, shown, total, onChange }: Props) {
  const set = (key: keyof FleetFilter) => (value: string) => onChange({ [key]: value });
  return (
    <form className="toolbar fleet-filters" role="search" aria-label="Filter clusters" onSubmit={(e) => e.preventDefault()}>
      <label>
        Search
        <input
          type="search"
          value={filter.q}
          placeholder="cluster or server name"
          onChange={(e) => set("q")(e.target.value)}
        />
      </label>
      <Choice label="Region" value={filter.region} options={options.regions} onChange={set("region")} />
      <Choice label="State" value={filter.state} options={options.states} onChange={set("state")} />
      <Choice label="Cause" value={filter.cause} options={options.causes} onChange={set("cause")} />
      <span className="muted toolbar-end" role="status" aria-label="Clusters shown">
        {shown === total ? `all ${total} clusters` : `${shown} of ${total} clusters`}
      </span>
    </form>
  );
}

function Choice({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: FilterOption[];
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label} ({o.count})
          </option>
        ))}
      </select>
    </label>
  );
}
