// A journal step that changed a replica's applier workers, in words: the capacity the source's
// writes predicted for the new worker count (the capacity before × the bounded speed-up) and
// the capacity measured after the step, with how far off the prediction was.
import type { Schemas } from "../api/client";
import { formatSpeedup } from "./parallelism";

export type PredictionOut = Schemas["PredictionOut"];

/** The two lines the journal prints under a replica's verdict. */
export interface PredictionLines {
  predicted: string;
  measured: string;
}

const GROUPED: Record<0 | 1, Intl.NumberFormat> = {
  0: new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }),
  1: new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }),
};

/** Transactions per second with thousands grouped: `1,000`, `948`, `2.5` (1 decimal under 10,
 * whole beyond, as the journal's figures). */
export function capacityText(perSecond: number): string {
  return GROUPED[Math.abs(perSecond) < 10 ? 1 : 0].format(perSecond);
}

/** measured ÷ predicted − 1 as whole percent with a real sign: `−10 %`, `+12 %`, `±0 %`. Halves
 * round away from zero, so −12.5 % is −13 % as +12.5 % is +13 %. */
export function errorText(error: number): string {
  const percent = Math.round(Math.abs(error) * 100);
  if (percent === 0) return "±0 %";
  return `${error < 0 ? "−" : "+"}${percent} %`;
}

/** "capped by 2 cores" only where the cores bound the speed-up: a stream allowing 1.4× on
 * 2 cores was not capped by them. */
function coresCap(p: PredictionOut): string {
  const capped = p.cores !== null && p.cores < Math.min(p.stream_allows, p.workers_after);
  return capped ? `, capped by ${p.cores} ${p.cores === 1 ? "core" : "cores"}` : "";
}

/**
 * "1 → 4 workers (conservative): predicted ~1,000 trx/s (2.0× the 500 trx/s before; the
 * source's writes allow 2.9×, capped by 2 cores)" and "measured 900 trx/s (−10 % vs predicted)".
 * `capacityBefore` is the before window's capacity (the apply rate while a backlog existed);
 * without it there is nothing to scale: the replica kept up before the step.
 */
export function predictionLines(p: PredictionOut, capacityBefore: number | null | undefined): PredictionLines {
  const head = `${p.workers_before} → ${p.workers_after} ${p.workers_after === 1 ? "worker" : "workers"} (${p.mode})`;
  const allows = `the source's writes allow ${formatSpeedup(p.stream_allows)}`;
  let predicted: string;
  if (p.predicted === null) {
    predicted = `${head}: ${allows}; no capacity before the step to scale (it kept up)`;
  } else {
    const before =
      capacityBefore === null || capacityBefore === undefined
        ? "the capacity before"
        : `the ${capacityText(capacityBefore)} trx/s before`;
    predicted =
      `${head}: predicted ~${capacityText(p.predicted)} trx/s ` +
      `(${formatSpeedup(p.factor)} ${before}; ${allows}${coresCap(p)})`;
  }
  let measured: string;
  if (p.measured === null) measured = "measured: not measurable (it kept up after the step)";
  else if (p.error === null) measured = `measured ${capacityText(p.measured)} trx/s`;
  else measured = `measured ${capacityText(p.measured)} trx/s (${errorText(p.error)} vs predicted)`;
  return { predicted, measured };
}
