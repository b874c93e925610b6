// Recharts' Legend writes each label in its series' colour: a mid-tone line colour is a fine
// mark but too faint as text (teal on white is 3.4:1). The label in ink; the icon keeps the colour.
import { INK } from "../theme/palette";

export function legendText(value: unknown) {
  return <span style={{ color: INK }}>{String(value)}</span>;
}
