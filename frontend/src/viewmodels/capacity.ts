// How the predictions word an apply capacity: a speed-up factor, transactions per second, and a
// per-transaction cost. Shared by the parallelism panel (what a change would give now) and the
// journal (what a change predicted and what was measured), so both read alike.

/** `2.6×`, `1.0×` (one decimal: the simulation is no finer than that); missing: `—`. */
export function formatSpeedup(speedup: number | null | undefined): string {
  if (speedup === null || speedup === undefined || !Number.isFinite(speedup)) return "—";
  return `${speedup.toFixed(1)}×`;
}

/** Said after a capped relaxed-flush prediction: its 10× is the model's cap, not a ceiling that
 * was measured (on the lab a capped prediction came out 5×). */
export const CAPPED_NOTE =
  "capped at 10×: its waits were over 90 % of its time, and what its CPU allows without them was not measured";

const GROUPED: Record<0 | 1, Intl.NumberFormat> = {
  0: new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 }),
  1: new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }),
};

/** Transactions per second with thousands grouped: `1,000`, `948`, `2.5` (1 decimal under 10,
 * whole beyond, as the journal's figures). */
export function capacityText(perSecond: number): string {
  return GROUPED[Math.abs(perSecond) < 10 ? 1 : 0].format(perSecond);
}

/** Seconds per transaction in milliseconds: an fsync is a fraction of one, `0.36 ms`. */
export function perTrxMs(seconds: number): string {
  return `${(seconds * 1000).toFixed(2)} ms`;
}
