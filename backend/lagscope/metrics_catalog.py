"""The metric catalog: one row per stored metric, and the alert metrics, in one place.

Bottom floor: this module imports nothing from Lagscope, so any layer may read it. The lists
that used to be written by hand in several files are derived from it:

- the series whitelist (``history/series.py``) and the API's ``MetricName`` enum
  (``api/schemas/series.py``, hence the OpenAPI document and the generated TypeScript);
- the per-channel sample row (``ingest/recording.py``) and the rollup select
  (``ingest/rollups.py``);
- the Prometheus channel gauges (``history/prometheus.py``);
- the channel values the live status copies from the newest sample (``history/status/``);
- the alert metric lists (``alerts/readings.py``, ``api/schemas/alerts.py``; the UI's
  rule form is checked against the generated OpenAPI enum by a Vitest test).

``tests/unit/repo/test_metrics_catalog.py`` fails when a table, a dataclass or a schema drifts from
the rows here. Adding a stored per-channel value read from the server (``relay_log_space``)
takes: the collector's column (``collectors/dialect.py``), the snapshot field
(``collectors/snapshot.py``), the ORM column and its migration, a row here, and, when it is
streamed, the live status fields (``history/status/``, ``api/schemas/status.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Per = Literal["channel", "instance"]
# How a value is stored and read: a number of seconds, a count of transactions, a rate per
# second, a size in bytes, a small-integer code (analysis/codes.py) or a flag.
Kind = Literal["seconds", "count", "rate", "bytes", "code", "flag"]


@dataclass(frozen=True, slots=True)
class Gauge:
    """A Prometheus gauge over the newest sample (``attribute``: the exposition point's field
    when it is not the metric itself, e.g. ``io_running`` worked out from ``io_state``)."""

    name: str
    help: str
    attribute: str | None = None


@dataclass(frozen=True, slots=True)
class StoredMetric:
    """One column of ``samples`` (per channel) or ``instance_samples`` (per instance).

    ``rollup``: the column prefix in ``samples_1m`` / ``samples_1h`` and which of
    ``min avg max last`` they keep (None: raw only). ``series``: offered by ``/series``.
    ``from_status``: copied as read from the replica's channel status (not worked out by
    ``analysis/channel_metrics.py``). ``streamed``: a field of the live channel status with the
    same name. ``alert``: the alert metric that reads it, if any.
    """

    name: str
    per: Per
    kind: Kind
    unit: str
    rollup: str | None = None
    rollup_stats: str = ""
    series: bool = True
    from_status: bool = False
    streamed: bool = False
    gauge: Gauge | None = None
    alert: str | None = None


@dataclass(frozen=True, slots=True)
class AlertMetric:
    """What an alert rule can watch: per channel (judged on samples) or per instance.
    ``watchdog``: judged by the API process's watchdog rather than after a tick."""

    name: str
    per: Per
    watchdog: bool = False


def _channel(
    name: str,
    kind: Kind,
    unit: str,
    *,
    rollup: str | None = None,
    rollup_stats: str = "",
    series: bool = True,
    from_status: bool = False,
    streamed: bool = False,
    gauge: Gauge | None = None,
    alert: str | None = None,
) -> StoredMetric:
    return StoredMetric(
        name, "channel", kind, unit, rollup, rollup_stats, series, from_status, streamed, gauge,
        alert,
    )  # fmt: skip


def _instance(name: str, kind: Kind, unit: str, series: bool = True) -> StoredMetric:
    return StoredMetric(name, "instance", kind, unit, series=series)


# In the tables' column order (the order of MetricName and of the gauges follows it).
STORED: tuple[StoredMetric, ...] = (
    _channel("verdict", "code", "", series=False),
    _channel("lag_s", "seconds", "s", rollup="lag", rollup_stats="min avg max last",
             streamed=True, alert="lag",
             gauge=Gauge("lagscope_lag_seconds",
                         "Best available replication lag (see lagscope_lag_source).")),
    _channel("lag_source", "code", "", series=False),
    _channel("seconds_behind_source", "seconds", "s", from_status=True, streamed=True,
             gauge=Gauge("lagscope_seconds_behind_source",
                         "The server's own Seconds_Behind_Source; absent when the server "
                         "reports NULL.")),
    _channel("heartbeat_lag_s", "seconds", "s", streamed=True),
    _channel("applier_lag_s", "seconds", "s", streamed=True),
    _channel("timeline_lag_s", "seconds", "s", rollup="timeline_lag", rollup_stats="avg max",
             streamed=True,
             gauge=Gauge("lagscope_timeline_lag_seconds",
                         "Lag from the source's recorded progress (no heartbeat needed); absent "
                         "when unknown.")),
    _channel("timeline_resolution_s", "seconds", "s", series=False, streamed=True),
    _channel("trx_behind", "count", "trx", rollup="trx_behind", rollup_stats="min avg max last",
             streamed=True, alert="trx_behind",
             gauge=Gauge("lagscope_trx_behind", "Transactions executed on the source, not here.")),
    _channel("not_received", "count", "trx", rollup="not_received", rollup_stats="avg max",
             streamed=True, alert="not_received",
             gauge=Gauge("lagscope_not_received_trx",
                         "Transactions on the source not yet received by this replica (network "
                         "side).")),
    _channel("received_not_applied", "count", "trx", rollup="received_not_applied",
             rollup_stats="avg max", streamed=True, alert="received_not_applied",
             gauge=Gauge("lagscope_received_not_applied_trx",
                         "Transactions received into the relay log, not yet applied (apply "
                         "side).")),
    _channel("apply_rate", "rate", "trx/s", rollup="apply_rate", rollup_stats="avg",
             streamed=True,
             gauge=Gauge("lagscope_apply_rate_trx_per_second",
                         "Transactions applied per second on this replica.")),
    _channel("source_rate", "rate", "trx/s", rollup="source_rate", rollup_stats="avg",
             streamed=True),
    _channel("io_state", "code", "", series=False, alert="io_stopped",
             gauge=Gauge("lagscope_io_running", "1 when the receiver (IO) thread is running.",
                         attribute="io_running")),
    _channel("sql_running", "flag", "", series=False, streamed=True, alert="sql_stopped",
             gauge=Gauge("lagscope_sql_running", "1 when the applier (SQL) thread is running.")),
    _channel("relay_log_space", "bytes", "B", from_status=True, streamed=True),
    _channel("disagreement", "flag", "", series=False, streamed=True, alert="lag_disagreement"),
    _channel("errant_trx", "count", "trx", streamed=True, alert="errant_trx",
             gauge=Gauge("lagscope_errant_trx",
                         "Transactions executed on this replica that its source never wrote "
                         "(errant GTIDs); absent when unknown.")),
    _instance("reachable", "flag", "", series=False),
    _instance("round_trip_s", "seconds", "s"),
    _instance("clock_offset_s", "seconds", "s"),
    _instance("commits_per_s", "rate", "1/s"),
    _instance("binlog_commits_per_s", "rate", "1/s"),
    _instance("binlog_group_commits_per_s", "rate", "1/s"),
    _instance("log_fsyncs_per_s", "rate", "1/s"),
    _instance("data_fsyncs_per_s", "rate", "1/s"),
    _instance("data_written_per_s", "rate", "B/s"),
    _instance("log_written_per_s", "rate", "B/s"),
    _instance("dblwr_pages_per_s", "rate", "1/s"),
    # The durability prediction's inputs: read from the store, not charted.
    _instance("binlog_fsync_s_per_s", "rate", "s/s", series=False),
    _instance("relay_log_fsync_s_per_s", "rate", "s/s", series=False),
    _instance("redo_fsync_s_per_s", "rate", "s/s", series=False),
    _instance("fsync_latency_s", "seconds", "s", series=False),
    _instance("semi_sync_on", "flag", "", series=False),
    _instance("semi_sync_avg_wait_s", "seconds", "s"),
    _instance("redo_log_enabled", "flag", "", series=False),
)  # fmt: skip

# In the order the API's enum and the rule form list them.
ALERTS: tuple[AlertMetric, ...] = (
    AlertMetric("lag", "channel"),
    AlertMetric("trx_behind", "channel"),
    AlertMetric("not_received", "channel"),
    AlertMetric("received_not_applied", "channel"),
    AlertMetric("io_stopped", "channel"),
    AlertMetric("sql_stopped", "channel"),
    AlertMetric("replication_error", "channel"),
    AlertMetric("eta", "channel"),
    AlertMetric("lag_disagreement", "channel"),
    # GTIDs executed on the replica that the source never wrote (analysis/errant.py).
    AlertMetric("errant_trx", "channel"),
    AlertMetric("unreachable", "instance"),
    AlertMetric("credentials_problem", "instance"),
    AlertMetric("param_changed", "instance"),
    AlertMetric("clock_skew", "instance"),
    # 1 on a cluster's source while its heartbeat writer has stopped (the row on the source no
    # longer advances, analysis/heartbeat.py), else 0: the heartbeat lag is then ignored.
    AlertMetric("heartbeat_writer_stale", "instance"),
    # Poll intervals with no reading (threshold N: fires after N missed polls); judged by the
    # API process (alerts/watchdog.py), so it fires when the worker or beat has stopped.
    AlertMetric("polling_stopped", "instance", watchdog=True),
)

# --- derived lists -----------------------------------------------------------------------------

CHANNEL_COLUMNS: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.per == "channel")
INSTANCE_COLUMNS: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.per == "instance")
SERIES: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.series)
SERIES_NAMES: tuple[str, ...] = tuple(m.name for m in SERIES)
ROLLED_UP: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.rollup is not None)
GAUGES: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.gauge is not None)
STREAMED: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.streamed)
FROM_STATUS: tuple[StoredMetric, ...] = tuple(m for m in STORED if m.from_status)

ALERT_NAMES: tuple[str, ...] = tuple(a.name for a in ALERTS)
CHANNEL_ALERTS: tuple[str, ...] = tuple(a.name for a in ALERTS if a.per == "channel")
INSTANCE_ALERTS: tuple[str, ...] = tuple(a.name for a in ALERTS if a.per == "instance")
WATCHDOG_ALERTS: tuple[str, ...] = tuple(a.name for a in ALERTS if a.watchdog)


def rollup_columns(metric: StoredMetric) -> tuple[str, ...]:
    """The rollup tables' columns of one metric, e.g. ``lag_min lag_avg lag_max lag_last``."""
    if metric.rollup is None:
        return ()
    return tuple(f"{metric.rollup}_{stat}" for stat in metric.rollup_stats.split())
