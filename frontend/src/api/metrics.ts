// Names the API takes for a stored series (`GET /api/v1/series?metric=`), as the generated
// schema types them: view models and hooks both import them from here, so no view model
// imports a hook.
import type { Schemas } from "./client";

export type MetricName = Schemas["SeriesResponse"]["metric"];

/** What an alert rule can watch (the API's `RuleIn.metric`), in the order the form lists them. */
export type AlertMetric = Schemas["RuleIn"]["metric"];
export const ALERT_METRICS: AlertMetric[] = [
  "lag", "trx_behind", "not_received", "received_not_applied", "io_stopped", "sql_stopped",
  "replication_error", "eta", "lag_disagreement", "unreachable", "credentials_problem",
  "param_changed", "clock_skew", "heartbeat_writer_stale", "polling_stopped",
];
