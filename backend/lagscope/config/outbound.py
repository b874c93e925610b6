"""Where Lagscope's findings leave it: notifications' links and webhooks, every poll pushed by
remote write, and the raw-series store past one box.

Kept apart from the rest of the settings because each of these sends data to another system the
operator names, so their limits (allowed hosts, timeouts, bounded queues) are read together.
"""

from __future__ import annotations

from pydantic import PositiveFloat, PositiveInt
from pydantic_settings import BaseSettings, SettingsConfigDict


class OutboundSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LAGSCOPE_", extra="ignore")

    # Alerts and webhooks (docs/alerts.md).
    # Where the dashboard is reached from a notification's links.
    external_url: str = "http://localhost:8000"
    # Webhook destinations an admin allows: host names, *.suffix, CIDR networks, comma-separated.
    # Empty allows none: alerts must not become a way to make requests into internal services.
    webhook_allowed_hosts: str = ""
    # A receiver must accept within these (seconds); a slow one is retried, not waited on.
    webhook_connect_timeout_s: float = 3.0
    webhook_read_timeout_s: float = 5.0
    # A delivery's lease: its tries' timeouts plus this, the time a sender has to log the
    # attempt before another may send it again (a sender killed mid-delivery is replaced after
    # the lease; the receiver sees the same Idempotency-Key twice).
    webhook_lease_margin_s: PositiveFloat = 30.0
    # Retry back-off: base·2^n capped, jittered, attempts until this much outage is covered.
    webhook_backoff_base_s: float = 10.0
    webhook_backoff_cap_s: float = 900.0
    webhook_retry_horizon_s: float = 3600.0

    # Every poll's figures pushed with Prometheus's remote-write protocol (docs/api.md):
    # the receiver's URL (Prometheus: http://host:9090/api/v1/write, run with
    # --web.enable-remote-write-receiver; VictoriaMetrics: http://host:8428/api/v1/write), and
    # optionally a bearer token sent to it and to nothing else. Empty: nothing is pushed.
    remote_write_url: str = ""
    remote_write_bearer_token: str = ""
    # Sent every this many seconds; while the receiver refuses or is down, at most this many
    # samples wait (the oldest are dropped, and counted, past it).
    remote_write_every_s: PositiveFloat = 1.0
    remote_write_max_waiting: PositiveInt = 1_000_000
    remote_write_timeout_s: PositiveFloat = 5.0

    # The raw-series store past one box (docs/operations.md, "Which store"): a VictoriaMetrics
    # single node (http://host:8428) or a cluster's vminsert base
    # (http://vminsert:8480/insert/0) with its vmselect base in
    # series_select_url. Every poll's raw series are written there too, and the explorer
    # reads raw ranges from it. Empty: the store's own tables only.
    series_url: str = ""
    series_select_url: str = ""
    series_bearer_token: str = ""
    # How far back the raw-series store keeps polls (its own -retentionPeriod): the explorer
    # reads raw ranges that far back from it, while the SQL store's raw tables may keep only
    # what rollups, status, episodes and alert previews need. None: the SQL raw retention.
    series_retention_raw_days: PositiveFloat | None = None

    def webhook_allow(self) -> list[str]:
        return [h.strip() for h in self.webhook_allowed_hosts.split(",") if h.strip()]
