// Builders of API answers for the view-model tests (typed against the generated schema).
import type { Schemas } from "../api/client";

/** An ETA answer's fields beyond seconds/catching_up (the band, never, its basis). */
export const ETA = { seconds: 0, catching_up: true, falling_behind_per_s: null, low_s: null, high_s: null, never: false, basis: null } satisfies Schemas["EtaOut"];

export function channelStatus(over: Partial<Schemas["ChannelStatusOut"]> = {}): Schemas["ChannelStatusOut"] {
  return {
    id: 1,
    instance_id: 2,
    instance: "replica1",
    name: "",
    sample_at: "2026-11-23T10:00:00Z",
    stale: false,
    verdict: "caught_up",
    lag_s: 0.2,
    lag_source: "heartbeat",
    seconds_behind_source: 0,
    heartbeat_lag_s: 0.2,
    applier_lag_s: null,
    timeline_lag_s: null,
    timeline_resolution_s: null,
    io_state: "yes",
    io_running: true,
    sql_running: true,
    last_io_error: null,
    last_sql_error: null,
    relay_log_space: 1000,
    trx_behind: 0,
    not_received: 0,
    received_not_applied: 0,
    apply_rate: 100,
    source_rate: 100,
    eta: { ...ETA },
    disagreement: false,
    causes: [],
    episode_id: null,
    ...over,
  };
}

export function instanceStatus(over: Partial<Schemas["InstanceStatusOut"]> = {}): Schemas["InstanceStatusOut"] {
  return {
    id: 2,
    name: "replica1",
    role: "replica",
    region: "near",
    enabled: true,
    flavor: "mariadb",
    version: "11.8",
    reachable: true,
    stale: false,
    last_polled_at: "2026-11-23T10:00:00Z",
    last_ok_at: "2026-11-23T10:00:00Z",
    last_error: null,
    round_trip_s: 0.001,
    clock_offset_s: 0,
    clock_resolution_s: 0.001,
    login_state: "ok",
    next_attempt_at: null,
    ...over,
  };
}

export function instanceOut(over: Partial<Schemas["InstanceOut"]> = {}): Schemas["InstanceOut"] {
  return {
    id: 1,
    cluster_id: 1,
    name: "source",
    host: "127.0.0.1",
    port: 3306,
    user: "monitor",
    has_password: true,
    role: "source",
    region: "near",
    enabled: true,
    tls: "preferred",
    tls_ca_path: null,
    server_public_key_path: null,
    flavor: "mariadb",
    version: "11.8",
    server_id: 1,
    last_ok_at: null,
    last_error: null,
    ...over,
  };
}

export function clusterOut(over: Partial<Schemas["ClusterOut"]> = {}): Schemas["ClusterOut"] {
  return {
    id: 1,
    name: "demo",
    poll_interval_s: 1,
    extra_params: [],
    heartbeat: { mode: "lagscope", schema_name: "lagscope", table: "heartbeat", interval_s: 0.25, user: null, has_password: false },
    enabled: true,
    created_at: "2026-11-23T09:00:00Z",
    instances: [
      instanceOut(),
      instanceOut({ id: 2, name: "replica1", role: "replica" }),
      instanceOut({ id: 3, name: "replica2", role: "replica", region: "far" }),
    ],
    ...over,
  };
}

export function edge(over: Partial<Schemas["TopologyEdgeOut"]> = {}): Schemas["TopologyEdgeOut"] {
  return {
    channel_id: 1,
    channel: "",
    source_id: 1,
    replica_id: 2,
    source_matched: true,
    stale: false,
    verdict: "caught_up",
    lag_s: 0.2,
    lag_source: "heartbeat",
    trx_behind: 0,
    not_received: 0,
    received_not_applied: 0,
    ...over,
  };
}

export function node(over: Partial<Schemas["TopologyNodeOut"]> = {}): Schemas["TopologyNodeOut"] {
  return { id: 1, name: "source", role: "source", region: "near", flavor: "mariadb", version: "11.8", reachable: true, ...over };
}
