"""Settings: every knob is an environment variable ``LAGSCOPE_*`` (pydantic-settings).

Unsafe defaults are refused outside demo mode: a placeholder secret key would make the
at-rest encryption of stored credentials worthless. The rules themselves live beside this class
(keys, sso, network), so the class reads as the list of knobs it is.
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace
from functools import lru_cache
from typing import Literal

from pydantic import (
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)
from pydantic_settings import SettingsConfigDict

from lagscope.collectors.targets import AllowList
from lagscope.config.jobs import PERIODIC_JOBS, PeriodicJob, Retention
from lagscope.config.keys import PLACEHOLDER_SECRET, refuse_unsafe_secrets
from lagscope.config.network import check_proxies, proxy_entries
from lagscope.config.outbound import OutboundSettings
from lagscope.config.sso import SsoSettings, check_sso, redirect_url


class Settings(OutboundSettings, SsoSettings):
    model_config = SettingsConfigDict(env_prefix="LAGSCOPE_", extra="ignore")

    database_url: str = "sqlite:///./lagscope.db"
    secret_key: str = PLACEHOLDER_SECRET
    demo: bool = False
    # Demo mode answers loopback clients only, unless this says otherwise (a demo on a VM).
    demo_allow_remote: bool = False
    broker_url: str = "redis://127.0.0.1:6379/0"
    # The first admin, created at API start-up when the store has no user yet.
    admin_username: str | None = None
    admin_password: str | None = None
    # The largest request body the API reads (bytes); larger ones are answered 413.
    max_body_bytes: int = 1024 * 1024
    # Login: failures free before back-off starts, per (username, client address) and per client
    # address — never per username alone, so nobody locks another client out — and how many
    # password checks (argon2) may run at once.
    login_free_failures_user: int = 5
    login_free_failures_address: int = 20
    login_concurrency: int = 2
    # API tokens: the longest lifetime one may be given (days; none = no maximum).
    api_token_max_days: float | None = None
    # A live stream re-checks its token this often (seconds): a revoked token's stream ends.
    stream_recheck_s: float = 30.0
    # Live streams open at once, per user (a tab each; more: 429) and in this API process (each
    # polls the store every second; more: 503).
    streams_per_user: int = 10
    streams_per_process: int = 200
    # The lag check for proxies and throttlers (/api/v1/check/…): the max_lag (seconds) of a
    # check that names none; recover_lag as a share of max_lag when a check names none (once over
    # max_lag, a replica is usable again at or under it); and how many of a channel's newest
    # polls that hysteresis looks back over (analysis/lag_check.py).
    check_max_lag_s: PositiveFloat = 5.0
    check_recover_ratio: float = 0.8
    check_window_polls: PositiveInt = 30
    # Collector timeouts (seconds): see ConnectionSpec for why they are short.
    connect_timeout_s: float = 2.0
    read_timeout_s: float = 2.0
    # The slow readings (MariaDB's and MySQL 5.7's applier worker threads, which only describe)
    # are read at most this often; tracked parameters are read every poll.
    params_every_s: float = 5.0
    # The clusters due in a second go to the workers in batches of at most this many servers
    # (a larger cluster alone): one task, one read of them all, one commit (ingest/tick_batch).
    # Each worker process reads a batch with as many threads, plus room for slow servers. 20:
    # batches of 40 cost more CPU, not less (more threads at once contend for the interpreter)
    # and doubled the measured round trip (bench/poll_throughput.py, 30 clusters).
    poll_batch_instances: PositiveInt = 20
    # Who runs the 1 s poll loop: "owner" (each shard of clusters is polled by the one worker
    # holding its lease, over one connection per server: engine/, docs/operations.md "Running
    # at scale") or "celery" (beat dispatches each second's ticks as tasks, any worker takes
    # them).
    poll_engine: Literal["celery", "owner"] = "owner"
    # The owner engine: clusters are grouped into this many shards (cluster id modulo), each
    # held by one owner under a lease of shard_lease_s seconds renewed every
    # shard_renew_every_s; a killed owner's shards are taken over once its lease has run out.
    shards: PositiveInt = 64
    shard_lease_s: PositiveFloat = 1.2
    shard_renew_every_s: PositiveFloat = 0.2
    # An owner ticks this many batches at once: a batch spends most of its time waiting for its
    # servers' answers, so too few leave the second's later batches waiting past half a second
    # (then dropped); more threads contend for the interpreter (bench/poll_throughput.py).
    owner_batches_at_once: PositiveInt = 4
    # An owner's batches hold at most this many servers (a larger cluster alone). Unlike a
    # Celery batch, an owner's costs a transaction, its shards' fences and a dozen statements
    # whatever its size: at 150 servers, batches of 60 took 15 % less CPU per poll than batches
    # of 20 (bench/poll_throughput.py --engine owner). A dead server holds only its batch's
    # recording (never the others' reads) until the read deadline, as before.
    owner_batch_instances: PositiveInt = 60
    # A lag episode ends once its channel has been caught up this long (docs/causes.md): a lag
    # that comes back sooner continues the same episode.
    episode_caught_up_s: PositiveFloat = 30.0
    # Secret-key rotation: earlier keys, comma-separated, tried (after LAGSCOPE_SECRET_KEY) for
    # decrypting only; `lagscope secrets rotate` re-encrypts everything under the current key.
    old_secret_keys: str = ""
    # A monitored server refusing the login (wrong password, locked account) is retried after
    # base, 2×base, 4×base … capped at max (seconds), not every tick: each refusal counts towards
    # the account's lock-out (FAILED_LOGIN_ATTEMPTS, max_password_errors, connection-control).
    login_backoff_base_s: PositiveFloat = 1.0  # 0 would retry every tick: refused at start
    login_backoff_max_s: PositiveFloat = 300.0
    # … and after this many refusals in a row, not at all until someone acts (a new password,
    # re-enabling the instance, retry-login; a new heartbeat password for the writer).
    login_give_up_after: PositiveInt = 10
    # Beat's periodic jobs (seconds; PERIODIC_JOBS names the task each one sends): dispatching
    # the due clusters' polls, the 1-minute and 1-hour rollups, retention, and re-queueing
    # pending webhook deliveries whose queued task was lost (killed worker, flushed broker).
    dispatch_every_s: PositiveFloat = 1.0
    rollup_every_s: PositiveFloat = 60.0
    retention_every_s: PositiveFloat = 3600.0
    # A window of each MariaDB source's binlog, grouped by group commit, this often (the
    # parallelism a replica could use; ingest/commit_samples.py).
    commit_sample_every_s: PositiveFloat = 300.0
    # Each source's binlog window stops at this deadline (seconds), after this many bytes in
    # all, and at an event announcing more than this (refused on its header): a source that
    # trickles or sends a huge event costs one bounded read (collectors/binlog_dump.py).
    binlog_window_deadline_s: PositiveFloat = 10.0
    binlog_window_max_bytes: PositiveInt = 64 * 1024 * 1024
    binlog_window_max_event_bytes: PositiveInt = 16 * 1024 * 1024
    # Every slow job (rollups, retention, the binlog windows) ends by this many seconds: at
    # 90 % Celery raises in the job (its transaction rolls back, the binlog windows stop between
    # sources), at 100 % it kills the job's pool process (tasks/queues.py). Far above what a
    # run takes, so that it only ever ends one that hangs.
    slow_job_time_limit_s: PositiveFloat = 1800.0
    # The server id the binlog window's dump uses; none: derived from the installation (its
    # store's random salt) in 0x4C530001–0x4C53FFFF. Never used when the source, a replica it
    # lists or a monitored server has it.
    binlog_dump_server_id: int | None = None
    # The replicas' cores, which cap the parallel-apply prediction (a worker is a thread);
    # 0: unknown, capped by the workers only.
    replica_cores: NonNegativeInt = 0
    delivery_sweep_every_s: PositiveFloat = 15.0
    # Retention per table.
    retention_raw_days: float = 3.0
    retention_1m_days: float = 60.0
    retention_1h_days: float = 730.0
    retention_episodes_days: PositiveFloat = 90.0
    retention_alerts_days: PositiveFloat = 90.0
    retention_audit_days: PositiveFloat = 365.0
    # Keep statements' full text (values included) beside their digests, shown to editors and
    # admins only; off: only digests (literals as ?) are stored (docs/security.md).
    keep_statement_text: bool = False
    # The web UI's production build (frontend/dist), served at "/"; none: the repository's.
    ui_dist: str | None = None
    # Monitored servers Lagscope may contact: comma-separated CIDRs and host names ("*.dom"
    # for a whole domain); empty = any. Applies to connection tests, stored instances, polling.
    allowed_targets: str = ""
    # Where instances' tls_ca_path and server_public_key_path may point (the workers read
    # those files): a directory the operator fills with CA bundles and pinned public keys.
    # Empty allows any absolute path: only where every editor may read the workers' file system.
    tls_ca_dir: str = "/etc/lagscope/ca"
    # Where `lagscope import` may read a password_file from (symbolic links and .. resolved
    # first); empty: no password_file is read. Its password_env variables must be named
    # LAGSCOPE_IMPORT_… (inventory/import_passwords.py says why).
    password_file_dir: str = "/run/secrets"
    # Connection tests (POST /instances/test) run in a pool of their own this big, with this
    # many more waiting (beyond: 503), and at most this many per user a minute (beyond: 429):
    # a test may wait its whole timeout on a silent host, and must not take threads or
    # database connections from the requests the dashboard makes meanwhile.
    probe_concurrency: int = 4
    probe_queue: int = 16
    probe_per_minute: int = 10

    # Proxies whose X-Forwarded-For / X-Forwarded-Proto the API believes: comma-separated
    # addresses or CIDRs; empty (the default) believes no one (api/serve.py says why).
    trusted_proxies: str = ""

    def trusted_proxy_list(self) -> list[str]:
        return [str(ipaddress.ip_network(p.strip(), strict=False)) for p in self._proxies()]

    def _proxies(self) -> list[str]:
        return proxy_entries(self.trusted_proxies)

    def allow_list(self) -> AllowList | None:
        return AllowList.parse(self.allowed_targets)

    # Every process's own watch (docs/alerts.md, docs/operations.md).
    # Every API, worker, beat and heartbeat process judges polling_stopped rules this often
    # (seconds; 0: not in this process). Compare-and-set states keep it to one notification.
    alert_watchdog_every_s: float = 5.0
    # Lagscope's own health (docs/operations.md): each process reports itself this
    # often (seconds); one silent for three reports is taken for gone by /readyz.
    report_every_s: float = 5.0

    def old_keys(self) -> tuple[str, ...]:
        return tuple(k.strip() for k in self.old_secret_keys.split(",") if k.strip())

    def retention(self) -> Retention:
        return Retention(
            self.retention_raw_days,
            self.retention_1m_days,
            self.retention_1h_days,
            self.retention_episodes_days,
            self.retention_alerts_days,
            self.retention_audit_days,
        )

    def explorer_retention(self) -> Retention:
        """How far back the explorer finds each resolution: raw ranges as far back as the
        raw-series store keeps them, when there is one."""
        kept = self.retention()
        if self.series_url and self.series_retention_raw_days is not None:
            return replace(kept, raw_days=self.series_retention_raw_days)
        return kept

    def periodic_jobs(self) -> tuple[PeriodicJob, ...]:
        return tuple(
            PeriodicJob(name, task, getattr(self, field)) for name, task, field in PERIODIC_JOBS
        )

    @field_validator("database_url")
    @classmethod
    def _normalise_url(cls, value: str) -> str:
        value = value.strip()
        # Accept the common shorthands and pin the drivers we ship.
        if value.startswith("postgres://"):
            value = "postgresql+psycopg://" + value[len("postgres://") :]
        if value.startswith("mysql://"):
            value = "mysql+pymysql://" + value[len("mysql://") :]
        return value

    @field_validator("allowed_targets")
    @classmethod
    def _parse_targets(cls, value: str) -> str:
        AllowList.parse(value)  # a typo must stop the start, not silently allow nothing
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _parse_proxies(cls, value: str) -> str:
        check_proxies(value)
        return value

    @field_validator(
        "probe_concurrency", "probe_per_minute", "streams_per_user", "streams_per_process"
    )
    @classmethod
    def _at_least_one(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value

    @field_validator("check_recover_ratio")
    @classmethod
    def _share(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError("a share of max_lag: 0 to 1")
        return value

    @field_validator("binlog_dump_server_id")
    @classmethod
    def _server_id(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 0xFFFF_FFFF:
            raise ValueError("a server id is 1 to 4294967295")
        return value

    @field_validator("probe_queue")
    @classmethod
    def _not_negative(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must be 0 or more")
        return value

    @model_validator(mode="after")
    def _refuse_unsafe_secrets(self) -> Settings:
        refuse_unsafe_secrets(self)
        return self

    def oidc_redirect(self) -> str:
        return redirect_url(self)

    @model_validator(mode="after")
    def _check_sso(self) -> Settings:
        """Single sign-on settings that cannot work stop the start, not the first sign-in."""
        check_sso(self)
        return self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
