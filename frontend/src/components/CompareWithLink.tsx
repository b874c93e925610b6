import { Link } from "react-router";
import { compareChannelsLink } from "../viewmodels/compareQuery";

interface Props {
  clusterId: number;
  channelId: number;
  /** The window on screen; the compare page opens on the same one. */
  fromMs: number;
  toMs: number;
  /** Preselect the other replica; otherwise the compare page picks one. */
  otherId?: number | null;
  label?: string;
}

/** The explorer's "compare with…": this replica against another over the window on screen. */
export function CompareWithLink({ clusterId, channelId, fromMs, toMs, otherId = null, label = "compare with…" }: Props) {
  return (
    <Link className="compare-with" to={compareChannelsLink(clusterId, channelId, otherId, fromMs, toMs)}>
      {label}
    </Link>
  );
}
