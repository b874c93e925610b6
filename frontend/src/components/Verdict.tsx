import type { VerdictInfo } from "../format/verdict";

/** A verdict as icon + words + colour (never colour alone). */
export function VerdictBadge({ verdict }: { verdict: VerdictInfo }) {
  return (
    <span className={`verdict tone-${verdict.tone}`} title={verdict.explain}>
      <span aria-hidden="true" className="verdict-icon">
        {verdict.icon}
      </span>
      {verdict.label}
    </span>
  );
}
