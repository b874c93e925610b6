// One accent colour per replica channel, stable across pages: the position of the channel
// among its cluster's channels ordered by (instance id, channel name). Red and amber are kept
// for problems, so the palette avoids them. The colours are the theme's (--series-N in
// styles.css): a lighter set on the dark theme.
import { SERIES } from "../theme/palette";

export const PALETTE = SERIES;

export interface ChannelKey {
  id: number;
  instance_id: number;
  name: string;
}

export function channelColors(channels: readonly ChannelKey[]): Map<number, string> {
  const ordered = [...channels].sort(
    (a, b) => a.instance_id - b.instance_id || a.name.localeCompare(b.name) || a.id - b.id,
  );
  return new Map(ordered.map((c, i) => [c.id, PALETTE[i % PALETTE.length] ?? PALETTE[0]]));
}

/** The label of a channel: the instance, plus the channel name when it is not the default. */
export function channelLabel(instance: string, channel: string): string {
  return channel ? `${instance} · ${channel}` : instance;
}
