// The cluster form's values and what it sends: the whole body on create, only what changed on
// edit (PATCH). The API merges `heartbeat` field by field, so an edit that leaves the heartbeat
// alone sends none, and one that changes its table sends only the table.
import type { Schemas } from "../api/client";

type Cluster = Schemas["ClusterOut"];
export type HeartbeatMode = Schemas["HeartbeatOut"]["mode"];

/** What each mode means, one line each (README "Heartbeat"). */
export const HEARTBEAT_MODES: readonly { mode: HeartbeatMode; label: string }[] = [
  { mode: "off", label: "off (lag from the source timeline / server)" },
  { mode: "lagscope", label: "written by Lagscope" },
  { mode: "pt-heartbeat", label: "pt-heartbeat" },
];

export interface ClusterFormValues {
  name: string;
  pollIntervalS: string;
  mode: HeartbeatMode;
  schemaName: string;
  table: string;
  intervalS: string;
  /** The heartbeat writer's login; "" = not set (the API keeps the stored one). */
  user: string;
  /** "" = not typed: the stored one stays. */
  password: string;
}

/** A new cluster's defaults are the API's (HeartbeatIn). */
export function clusterFormValues(cluster?: Cluster): ClusterFormValues {
  return {
    name: cluster?.name ?? "",
    pollIntervalS: String(cluster?.poll_interval_s ?? 1),
    mode: cluster?.heartbeat.mode ?? "off",
    schemaName: cluster?.heartbeat.schema_name ?? "lagscope",
    table: cluster?.heartbeat.table ?? "heartbeat",
    intervalS: String(cluster?.heartbeat.interval_s ?? 0.25),
    user: cluster?.heartbeat.user ?? "",
    password: "",
  };
}

/** The PATCH body: only the fields that differ from `original` (an empty object: nothing). */
export function clusterPatch(original: Cluster, edited: ClusterFormValues): Schemas["ClusterPatch"] {
  const body: Schemas["ClusterPatch"] = {};
  if (edited.name.trim() !== original.name) body.name = edited.name.trim();
  if (Number(edited.pollIntervalS) !== original.poll_interval_s) body.poll_interval_s = Number(edited.pollIntervalS);
  const was = original.heartbeat;
  const heartbeat: Schemas["HeartbeatIn"] = {};
  if (edited.mode !== was.mode) heartbeat.mode = edited.mode;
  if (edited.schemaName.trim() !== was.schema_name) heartbeat.schema_name = edited.schemaName.trim();
  if (edited.table.trim() !== was.table) heartbeat.table = edited.table.trim();
  if (Number(edited.intervalS) !== was.interval_s) heartbeat.interval_s = Number(edited.intervalS);
  // The API cannot clear the writer's user (an empty name is refused): only a new one is sent.
  if (edited.user.trim() !== "" && edited.user.trim() !== (was.user ?? "")) heartbeat.user = edited.user.trim();
  if (edited.password !== "") heartbeat.password = edited.password;
  if (Object.keys(heartbeat).length > 0) body.heartbeat = heartbeat;
  return body;
}

export function clusterCreate(values: ClusterFormValues): Schemas["ClusterIn"] {
  return {
    name: values.name.trim(),
    poll_interval_s: Number(values.pollIntervalS),
    heartbeat: {
      mode: values.mode,
      schema_name: values.schemaName.trim(),
      table: values.table.trim(),
      interval_s: Number(values.intervalS),
      ...(values.user.trim() ? { user: values.user.trim() } : {}),
      ...(values.password ? { password: values.password } : {}),
    },
  };
}
