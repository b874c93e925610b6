// What the health strip under the header says: Lagscope's own parts that are not ok, down
// before warn, each as its name and the API's sentence. Nothing at all while every part is ok,
// and nothing before the first answer (a page does not open on a warning it has not had).
import type { Schemas } from "../api/client";

/** Lagscope's own readiness, as /readyz answers it (useReadiness reads it). */
export type Readiness = Schemas["ReadinessOut"];

export type HealthSeverity = "down" | "warn";

export interface HealthStripItem {
  /** The part, as /readyz names it ("broker", "polling", …; "api" when the API is silent). */
  component: string;
  state: HealthSeverity;
  /** One sentence an operator can act on (shown as text). */
  text: string;
}

export interface HealthStripModel {
  /** The worst state among the items: the strip's colour. */
  severity: HealthSeverity;
  items: HealthStripItem[];
}

export const API_UNREACHABLE = "The Lagscope API does not answer: the figures on this page may be stale.";

const RANK: Record<HealthSeverity, number> = { down: 0, warn: 1 };

/** The strip for the last readiness answer; `failed`: the last request had no answer at all
 * (network error, timeout, a 5xx without a readiness body), whatever was known before. */
export function buildHealthStrip(readiness: Readiness | undefined, failed: boolean): HealthStripModel | null {
  if (failed) {
    return { severity: "down", items: [{ component: "api", state: "down", text: API_UNREACHABLE }] };
  }
  if (readiness === undefined) return null;
  const items: HealthStripItem[] = [];
  for (const c of readiness.components) {
    if (c.state === "down" || c.state === "warn") items.push({ component: c.name, state: c.state, text: c.message });
  }
  if (items.length === 0) return null;
  // Stable: within a state, the API's order (the pipeline's: store, broker, workers, beat, …).
  items.sort((a, b) => RANK[a.state] - RANK[b.state]);
  return { severity: items[0]?.state === "down" ? "down" : "warn", items };
}
