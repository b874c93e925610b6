// The why strips: under a lag chart, one strip per replica channel with its causes in words on
// the chart's time axis (same left offset and width as the plot area). Hover or focus on a
// segment shows its evidence below the strips; a click keeps it shown. All of it is text.
import { useId, useState } from "react";
import { MISSING } from "../format/format";
import type { CauseDetail, WhyStrip } from "../viewmodels/causes";
import { RIGHT_MARGIN, Y_AXIS_WIDTH } from "./chartGeometry";

const ROW_PX = 20;
// Narrower than this (percent of the strip: ~70 px on a laptop) a segment's words do not fit.
const NARROW_PCT = 7;
// … and its words go beside it only if there is room on its left for them.
const BESIDE_ROOM_PCT = 25;

/** An open (current) segment too narrow for its words, with room for them on its left. */
function besideWords(s: WhyStrip["segments"][number]): boolean {
  return s.open && s.widthPct < NARROW_PCT && s.leftPct >= BESIDE_ROOM_PCT;
}

interface Props {
  strips: readonly WhyStrip[];
  /** Said in a strip without causes. */
  emptyText?: string;
}

export function WhyStrips({ strips, emptyText = "no cause named in this range" }: Props) {
  const [hovered, setHovered] = useState<string | null>(null);
  const [pinned, setPinned] = useState<string | null>(null);
  const detailId = `why-detail-${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const shownKey = hovered ?? pinned;
  const shown = shownKey ? strips.flatMap((s) => s.segments).find((s) => s.key === shownKey) : undefined;

  return (
    <div className="why-strips" data-testid="why-strips">
      {strips.map((strip) => (
        <div key={strip.channelId} className="why-strip" data-testid="why-strip" data-channel={strip.label}>
          <div className="why-strip-label" id={`${detailId}-${strip.channelId}`}>
            <span className="swatch" style={{ background: strip.color }} aria-hidden="true" /> why {strip.label}
          </div>
          <div
            className="why-strip-track"
            role="group"
            aria-labelledby={`${detailId}-${strip.channelId}`}
            style={{ marginLeft: Y_AXIS_WIDTH, marginRight: RIGHT_MARGIN, height: strip.rows * ROW_PX }}
          >
            {strip.segments.length === 0 ? <span className="muted why-none">{emptyText}</span> : null}
            {strip.segments.map((s) => (
              <button
                key={s.key}
                type="button"
                className={`why-segment tone-bg-${s.tone}${s.tentative ? " tentative" : ""}${s.open ? " open" : ""}${besideWords(s) ? " words-beside" : ""}`}
                style={{ left: `${s.leftPct}%`, width: `${s.widthPct}%`, top: s.row * ROW_PX }}
                data-testid="why-segment"
                data-cause={s.cause}
                aria-label={s.label}
                aria-describedby={shownKey === s.key ? detailId : undefined}
                aria-pressed={pinned === s.key}
                onMouseEnter={() => setHovered(s.key)}
                onMouseLeave={() => setHovered(null)}
                onFocus={() => setHovered(s.key)}
                onBlur={() => setHovered(null)}
                onClick={() => setPinned(pinned === s.key ? null : s.key)}
              >
                {s.words}
              </button>
            ))}
            {strip.segments.filter(besideWords).map((s) => (
              // The current cause as a sliver (a short cause in a long range) keeps its words,
              // beside it on the left: the same hover target, read by screen readers once (its
              // button has the words).
              <span
                key={`beside:${s.key}`}
                className={`why-beside tone-${s.tone}`}
                style={{ right: `${100 - s.leftPct}%`, top: s.row * ROW_PX }}
                aria-hidden="true"
                onMouseEnter={() => setHovered(s.key)}
                onMouseLeave={() => setHovered(null)}
                onClick={() => setPinned(pinned === s.key ? null : s.key)}
              >
                {s.words}
              </span>
            ))}
          </div>
        </div>
      ))}
      <div id={detailId} className="why-detail" data-testid="why-detail" aria-live="polite">
        {shown ? (
          <CauseDetailView detail={shown.detail} />
        ) : strips.some((s) => s.segments.length > 0) ? (
          <span className="muted small">Point at a cause (or focus it) to see its evidence.</span>
        ) : null}
      </div>
    </div>
  );
}

/** A cause in words with when, the sentence, what to do, and the evidence as key: value text. */
export function CauseDetailView({ detail, withEvidence = true }: { detail: CauseDetail; withEvidence?: boolean }) {
  return (
    <div className="cause-detail">
      <div>
        <strong>{detail.words}</strong> <span className="muted">{detail.when}</span>{" "}
        <span className="muted small">· {detail.confidence}</span>
      </div>
      {detail.sentence ? <p className="cause-sentence">{detail.sentence}</p> : null}
      {detail.action ? (
        <p className="cause-action">
          <span className="muted">What to do: </span>
          {detail.action}
        </p>
      ) : null}
      {detail.needs ? <p className="muted small">Evidence incomplete: {detail.needs}</p> : null}
      {withEvidence && detail.groups.length ? (
        <div className="cause-evidence">
          {detail.groups.map((g) => {
            // A hover is a glance: what the server left empty is left out here (the episode
            // page's tables show every row, missing ones as "—").
            const rows = g.rows.filter((r) => r.text !== MISSING);
            return rows.length ? (
              <div key={g.kind} className="cause-evidence-group" data-kind={g.kind}>
                <span className="cause-evidence-title">{g.title}</span>
                <dl>
                  {rows.map((r) => (
                    <div key={r.key} data-key={r.key}>
                      <dt>{r.label}</dt>
                      <dd>{r.code ? <code className="evidence-code">{r.text}</code> : r.text}</dd>
                    </div>
                  ))}
                </dl>
              </div>
            ) : null;
          })}
        </div>
      ) : null}
    </div>
  );
}
