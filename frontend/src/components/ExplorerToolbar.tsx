import { useState, type FormEvent } from "react";
import type { LiveStatus } from "../live/connection";
import { LAG_SOURCES, RANGE_NAMES, type ExplorerState, type LagSourceChoice, type RangeName } from "../viewmodels/explorerState";
import { liveIndicator } from "../viewmodels/liveIndicator";

const SOURCE_WORDS: Record<LagSourceChoice, string> = {
  best: "best",
  heartbeat: "heartbeat",
  applier: "applier",
  server: "server (Seconds_Behind)",
  all: "all side by side",
};

const DRAG_MODES = ["annotate", "zoom"] as const;

function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

interface RangeProps {
  state: ExplorerState;
  live: boolean;
  /** The live stream's state (null: not streaming). */
  stream?: LiveStatus | null;
  startMs: number;
  endMs: number;
  onRange: (range: RangeName) => void;
  onCustom: (fromMs: number, toMs: number) => void;
  onZoomOut: () => void;
  /** Back to the preset a drag-to-zoom left; shown only while zoomed from one. */
  onResetZoom: () => void;
}

export function RangePicker({ state, live, stream = null, startMs, endMs, onRange, onCustom, onZoomOut, onResetZoom }: RangeProps) {
  const [custom, setCustom] = useState<{ from: string; to: string } | null>(null);

  function apply(event: FormEvent) {
    event.preventDefault();
    if (!custom) return;
    const from = Date.parse(custom.from);
    const to = Date.parse(custom.to);
    if (from < to) {
      onCustom(from, to);
      setCustom(null);
    }
  }

  return (
    <div className="range-picker">
      <div role="group" aria-label="Time range" className="segmented">
        {RANGE_NAMES.map((name) => (
          <button key={name} type="button" aria-pressed={state.fitMs === null && state.range === name} onClick={() => onRange(name)}>
            {name}
          </button>
        ))}
        <button
          type="button"
          aria-pressed={state.range === "custom"}
          aria-expanded={custom !== null}
          onClick={() => setCustom(custom ? null : { from: localInput(startMs), to: localInput(endMs) })}
        >
          custom
        </button>
      </div>
      {state.fitMs !== null ? (
        <span className="muted small" title="The cluster is younger than the default hour: its whole history is shown until you pick a range">
          all data: last {Math.round(state.fitMs / 60_000)} min
        </span>
      ) : null}
      <button type="button" onClick={onZoomOut} title="Twice the range around the same centre">
        zoom out
      </button>
      {state.range === "custom" && state.zoomFrom ? (
        <button type="button" onClick={onResetZoom} title={`Back to the last ${state.zoomFrom}, following the clock`}>
          Reset zoom
        </button>
      ) : null}
      <LiveDot live={live} stream={stream} />
      {custom ? (
        <form className="custom-range" onSubmit={apply}>
          <label className="inline">
            from
            <input type="datetime-local" value={custom.from} onChange={(e) => setCustom({ ...custom, from: e.target.value })} />
          </label>
          <label className="inline">
            to
            <input type="datetime-local" value={custom.to} onChange={(e) => setCustom({ ...custom, to: e.target.value })} />
          </label>
          <button type="submit">Apply</button>
        </form>
      ) : null}
    </div>
  );
}

function LiveDot({ live, stream }: { live: boolean; stream: LiveStatus | null }) {
  const indicator = liveIndicator(live, stream);
  return (
    <span className={`live-dot ${indicator.tone}`} role="status" aria-label="Live updates" title={indicator.title}>
      {indicator.text}
    </span>
  );
}

interface ControlProps {
  state: ExplorerState;
  channels: readonly { id: number; label: string; color: string; region: string }[];
  dragMode: "annotate" | "zoom";
  onToggle: (channelId: number) => void;
  onSource: (source: LagSourceChoice) => void;
  onLog: (log: boolean) => void;
  onDragMode: (mode: "annotate" | "zoom") => void;
}

export function ExplorerControls({ state, channels, dragMode, onToggle, onSource, onLog, onDragMode }: ControlProps) {
  return (
    <div className="explorer-controls">
      <fieldset>
        <legend>Replicas</legend>
        {channels.map((c) => (
          <label key={c.id} className="inline">
            <input type="checkbox" checked={!state.hidden.includes(c.id)} onChange={() => onToggle(c.id)} />
            <span className="swatch" style={{ background: c.color }} aria-hidden="true" />
            {c.label}
            {c.region ? <span className="badge region">{c.region}</span> : null}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Lag source</legend>
        {LAG_SOURCES.map((s) => (
          <label key={s} className="inline">
            <input type="radio" name="lag-source" value={s} checked={state.source === s} onChange={() => onSource(s)} />
            {SOURCE_WORDS[s]}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Chart</legend>
        <label className="inline">
          <input type="checkbox" checked={state.log} onChange={(e) => onLog(e.target.checked)} />
          log scale
        </label>
        <span className="drag-mode">
          <span id="drag-mode-label">Drag to:</span>
          <span role="group" aria-labelledby="drag-mode-label" className="segmented">
            {DRAG_MODES.map((mode) => (
              <button key={mode} type="button" aria-pressed={dragMode === mode} onClick={() => onDragMode(mode)}>
                {mode}
              </button>
            ))}
          </span>
        </span>
      </fieldset>
    </div>
  );
}
