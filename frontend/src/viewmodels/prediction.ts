// A journal step that changed a replica's applier workers, in words: the capacity the source's
// writes predicted for the new worker count (the capacity before × the bounded speed-up) and
// the capacity measured after the step, with how far off the prediction was. A step that relaxed
// the flush settings reads the same way, its factor priced from the fsync time it removes.
import type { Schemas } from "../api/client";
import { CAPPED_NOTE, capacityText, formatSpeedup, perTrxMs } from "./capacity";

export { capacityText };

export type PredictionOut = Schemas["PredictionOut"];
export type DurabilityPredictionOut = Schemas["DurabilityPredictionOut"];

/** The two lines the journal prints under a replica's verdict. */
export interface PredictionLines {
  predicted: string;
  measured: string;
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
    predicted =
      `${head}: predicted ~${capacityText(p.predicted)} trx/s ` +
      `(${formatSpeedup(p.factor)} ${beforeText(capacityBefore)}; ${allows}${coresCap(p)})`;
  }
  return { predicted, measured: measuredText(p.measured, p.error) };
}

// Both predictions are checked against the same measurement, so they word it alike.
function measuredText(measured: number | null, error: number | null): string {
  if (measured === null) return "measured: not measurable (it kept up after the step)";
  if (error === null) return `measured ${capacityText(measured)} trx/s`;
  return `measured ${capacityText(measured)} trx/s (${errorText(error)} vs predicted)`;
}

function beforeText(capacityBefore: number | null | undefined): string {
  return capacityBefore === null || capacityBefore === undefined
    ? "the capacity before"
    : `the ${capacityText(capacityBefore)} trx/s before`;
}

/**
 * "sync_binlog 1 → 0: predicted ~1,250 trx/s (2.5× the 500 trx/s before; removes 1.20 ms
 * binary log fsync of 2.00 ms per transaction)" and the measured line as for worker counts.
 * A capped factor says so (CAPPED_NOTE): 10× is the model's cap, not a measured ceiling.
 */
export function durabilityLines(d: DurabilityPredictionOut, capacityBefore: number | null | undefined): PredictionLines {
  const head = d.settings.join(", ");
  let predicted: string;
  if (d.predicted === null) {
    predicted = `${head}: no prediction (${d.unknown.join("; ")})`;
  } else {
    const factor = formatSpeedup(d.factor);
    // Every part may be unpriced: the prediction is then the capacity before, and `unknown` says why.
    const parts = d.removed.map((r) => `${perTrxMs(r.s_per_trx)} ${r.what}`).join(", ") || "nothing";
    const of = d.applier_s_per_trx === null ? "" : ` of ${perTrxMs(d.applier_s_per_trx)}`;
    const capped = (d.capped ? `; ${CAPPED_NOTE}` : "") + (d.note ? `; ${d.note}` : "");
    const unpriced = d.unknown.length ? `; not priced: ${d.unknown.join("; ")}` : "";
    predicted =
      `${head}: predicted ~${capacityText(d.predicted)} trx/s ` +
      `(${factor} ${beforeText(capacityBefore)}; removes ${parts}${of} per transaction)${capped}${unpriced}`;
  }
  return { predicted, measured: measuredText(d.measured, d.error) };
}
