import { formatTimeTick } from "../format/format";
import { localOffsetMs, timeTicks } from "../format/ticks";
import { axisTheme } from "./chartTheme";

/** Props for Recharts' XAxis over a time range: the fixed domain and round ticks. */
export function timeAxisProps(startMs: number, endMs: number, count = 8) {
  const span = endMs - startMs;
  return {
    type: "number" as const,
    dataKey: "t",
    domain: [startMs, endMs] as [number, number],
    allowDataOverflow: true,
    ticks: timeTicks(startMs, endMs, count, localOffsetMs(startMs)),
    tickFormatter: (ms: number) => formatTimeTick(ms, span),
    ...axisTheme(11),
  };
}
