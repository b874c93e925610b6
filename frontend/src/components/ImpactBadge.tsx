import type { ImpactInfo } from "../format/impact";

/** An impact verdict or a backlog cause as icon + words + colour (never colour alone). */
export function ImpactBadge({ info }: { info: ImpactInfo }) {
  return (
    <span className={`verdict tone-${info.tone}`} title={info.explain}>
      <span aria-hidden="true" className="verdict-icon">
        {info.icon}
      </span>
      {info.label}
    </span>
  );
}
