// Names the API takes for a stored series (`GET /api/v1/series?metric=`), as the generated
// schema types them: view models and hooks both import them from here, so no view model
// imports a hook.
import type { Schemas } from "./client";
import { ALERT_METRICS as GENERATED_ALERT_METRICS } from "./enums";

export type MetricName = Schemas["SeriesResponse"]["metric"];

/** What an alert rule can watch (the API's `RuleIn.metric`), in the order the form lists them:
 * the catalog's order, generated into enums.ts by `make client`. */
export type AlertMetric = Schemas["RuleIn"]["metric"];
export const ALERT_METRICS: readonly AlertMetric[] = GENERATED_ALERT_METRICS;
