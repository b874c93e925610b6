"""Settings: every knob is an environment variable ``LAGSCOPE_*`` (pydantic-settings).

Unsafe defaults are refused outside demo mode: a placeholder secret key would make the
at-rest encryption of stored credentials worthless.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal
from urllib.parse import urlsplit

from pydantic import (
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict
from zxcvbn import zxcvbn

from lagscope.collectors.targets import AllowList

PLACEHOLDER_SECRET = "change-me"
# Where single sign-on's provider sends the browser back (api/routers/oidc.py).
OIDC_CALLBACK_PATH = "/api/v1/auth/oidc/callback"


@dataclass(frozen=True, slots=True)
class Retention:
    raw_days: float
    minute_days: float
    hour_days: float
    # Ended lag episodes with their cause segments; alert events with their finished deliveries
    # (both hold text from monitored servers: docs/security.md).
    episode_days: float = 90.0
    alert_days: float = 90.0
    # Who changed what (models/audit.py).
    audit_days: float = 365.0


@dataclass(frozen=True, slots=True)
class PeriodicJob:
    """One of beat's periodic jobs: its schedule entry, the Celery task it sends (the explicit
    ``name=`` of the task, so a module move orphans nothing) and how often (seconds)."""

    name: str
    task: str
    every_s: float


# Beat's periodic jobs: (schedule entry, task name, the setting that says how often). The one
# table tasks/app.py builds the schedule from; each interval is a setting, LAGSCOPE_<FIELD>.
PERIODIC_JOBS = (
    ("dispatch-polls", "lagscope.dispatch_polls", "dispatch_every_s"),
    ("rollup", "lagscope.rollup", "rollup_every_s"),
    ("retention", "lagscope.enforce_retention", "retention_every_s"),
    ("sweep-deliveries", "lagscope.sweep_deliveries", "delivery_sweep_every_s"),
    ("sample-commit-groups", "lagscope.sample_commit_groups", "commit_sample_every_s"),
)


class Settings(BaseSettings):
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
        return [p.strip() for p in self.trusted_proxies.split(",") if p.strip()]

    def allow_list(self) -> AllowList | None:
        return AllowList.parse(self.allowed_targets)

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
    # Every API, worker, beat and heartbeat process judges polling_stopped rules this often
    # (seconds; 0: not in this process). Compare-and-set states keep it to one notification.
    alert_watchdog_every_s: float = 5.0
    # Lagscope's own health (docs/operations.md): each process reports itself this
    # often (seconds); one silent for three reports is taken for gone by /readyz.
    report_every_s: float = 5.0
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

    # Single sign-on with OpenID Connect (docs/security.md, "Single sign-on"): the provider's
    # issuer URL (discovery at <issuer>/.well-known/openid-configuration; empty: no single
    # sign-on), this client's id and secret there, what the login page calls it, the scopes
    # asked for, the claim holding the person's groups (a dotted path reaches into an object),
    # and which groups give which role (comma-separated; the highest role wins, no group: no
    # access). The redirect URL is the callback the provider sends the browser back to; empty:
    # LAGSCOPE_EXTERNAL_URL + /api/v1/auth/oidc/callback.
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: SecretStr | None = None
    oidc_provider_name: str = "SSO"
    oidc_scopes: str = "openid profile email"
    oidc_roles_claim: str = "groups"
    oidc_admin_groups: str = ""
    oidc_editor_groups: str = ""
    oidc_viewer_groups: str = ""
    oidc_redirect_url: str = ""
    # Password sign-in: off refuses every password login except the break-glass account's
    # (a local admin for when the provider is down); tokens already issued stay valid.
    local_login: bool = True
    break_glass_admin: str | None = None

    def webhook_allow(self) -> list[str]:
        return [h.strip() for h in self.webhook_allowed_hosts.split(",") if h.strip()]

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
        for entry in (p.strip() for p in value.split(",")):
            if not entry:
                continue
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(
                    f"{entry!r} is not an address or a CIDR network (host names are not "
                    "accepted: a proxy is trusted by the address it connects from)"
                ) from None
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
        if self.demo:
            if self.secret_key != PLACEHOLDER_SECRET:
                # Demo mode lets every caller in as an admin; a real key marks a real store.
                raise ValueError(
                    "LAGSCOPE_DEMO=1 lets every caller in as an admin without a login and is "
                    "refused together with a real LAGSCOPE_SECRET_KEY (a real deployment's "
                    "store): unset LAGSCOPE_DEMO, or run the throwaway demo without the key"
                )
            if self.old_keys():
                # An old key reads a real store's credentials just as well as the current one.
                raise ValueError(
                    "LAGSCOPE_DEMO=1 is refused together with LAGSCOPE_OLD_SECRET_KEYS: the "
                    "demo's store has no credentials under any other key, and a real key there "
                    "would open a real store's credentials to every caller"
                )
            return self
        if self.secret_key == PLACEHOLDER_SECRET:
            raise ValueError(
                "LAGSCOPE_SECRET_KEY must be set (it encrypts stored credentials); "
                "only LAGSCOPE_DEMO=1 may run with the placeholder"
            )
        if problem := weak_key_problem(self.secret_key):
            raise ValueError(
                f"LAGSCOPE_SECRET_KEY is too weak: {problem}; make one with "
                "`lagscope secrets generate-key`"
            )
        return self

    def oidc_redirect(self) -> str:
        return self.oidc_redirect_url.strip() or self.external_url.rstrip("/") + OIDC_CALLBACK_PATH

    @model_validator(mode="after")
    def _check_sso(self) -> Settings:
        """Single sign-on settings that cannot work stop the start, not the first sign-in."""
        issuer = self.oidc_issuer.strip()
        if not issuer:
            if not self.local_login and not self.demo:
                raise ValueError(
                    "LAGSCOPE_LOCAL_LOGIN=off without LAGSCOPE_OIDC_ISSUER would let nobody sign "
                    "in: configure single sign-on first"
                )
            return self
        url = urlsplit(issuer)
        # Its keys vouch for every identity: fetched over https (http to this machine only).
        local = is_loopback(url.hostname or "")
        trusted = url.scheme == "https" or (url.scheme == "http" and local)
        if not trusted or not url.hostname or url.query or url.fragment:
            raise ValueError(
                "LAGSCOPE_OIDC_ISSUER must be an https:// URL (http:// to a loopback host only), "
                f"without query or fragment: {issuer!r}"
            )
        groups = (self.oidc_admin_groups, self.oidc_editor_groups, self.oidc_viewer_groups)
        if not self.oidc_client_id.strip():
            raise ValueError("LAGSCOPE_OIDC_CLIENT_ID must be set with LAGSCOPE_OIDC_ISSUER")
        if "openid" not in self.oidc_scopes.replace(",", " ").split():
            raise ValueError("LAGSCOPE_OIDC_SCOPES must include openid")
        if not self.oidc_roles_claim.strip():
            raise ValueError("LAGSCOPE_OIDC_ROLES_CLAIM must name the claim holding the groups")
        if not any(name.strip() for text in groups for name in text.split(",")):
            raise ValueError(
                "single sign-on gives a role only to members of LAGSCOPE_OIDC_ADMIN_GROUPS, "
                "_EDITOR_GROUPS or _VIEWER_GROUPS, and all three are empty: nobody could sign in"
            )
        back = urlsplit(self.oidc_redirect())
        if (
            back.scheme not in ("http", "https")
            or not back.hostname
            or back.query
            or not back.path.endswith(OIDC_CALLBACK_PATH)
        ):
            raise ValueError(
                f"the redirect URL (LAGSCOPE_OIDC_REDIRECT_URL, else LAGSCOPE_EXTERNAL_URL + "
                f"{OIDC_CALLBACK_PATH}) must be an http(s) URL ending with {OIDC_CALLBACK_PATH}: "
                f"{self.oidc_redirect()!r}"
            )
        return self


MIN_KEY_CHARS = 32
# zxcvbn's estimate of the guesses an attacker who knows the usual patterns (words, keyboard
# walks, sequences, repeats, dates) needs. It rates each random character as 10 guesses, so it
# underrates random keys: 32 random hex characters (128 bits) scored 10^27.0 at worst in
# 13,000 tries (median ~10^31.5), a `generate-key` key ~10^43; "0123456789"*4 scores ~10^2,
# LagscopeProductionMysqlSecret2026 ~10^16, "correct horse battery staple orange" 10^25.
MIN_KEY_GUESSES_LOG10 = 26.0
ZXCVBN_MAX_CHARS = 72  # zxcvbn refuses longer input: a longer key is judged by its start
# Words an operator is likely to put in a key here, which zxcvbn's dictionaries lack.
KEY_CONTEXT_WORDS = (
    "lagscope", "lag", "scope", "mysql", "mariadb", "replica", "replication", "secret",
    "key", "prod", "production", "staging", "demo", "admin", "password", "changeme",
)  # fmt: skip


def generate_key() -> str:
    """A key for LAGSCOPE_SECRET_KEY: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def weak_key_problem(key: str) -> str | None:
    """Why a secret key is too weak to protect stored passwords, or None.

    Judged by zxcvbn (Dropbox's estimator, the maintained Python port), not a rule of ours: a
    key that is long but made of a pattern ("0123456789"*4, "Summer2026!"*3) is refused.
    """
    if len(key) < MIN_KEY_CHARS:
        return f"{len(key)} characters, at least {MIN_KEY_CHARS} are needed"
    estimate = zxcvbn(key[:ZXCVBN_MAX_CHARS], user_inputs=list(KEY_CONTEXT_WORDS))
    guesses_log10 = float(estimate["guesses_log10"])
    if guesses_log10 < MIN_KEY_GUESSES_LOG10:
        warning = estimate["feedback"].get("warning") or "a guessable pattern"
        return (
            f"the zxcvbn strength estimator guesses it in about 10^{guesses_log10:.0f} tries "
            f"({warning.rstrip('.').lower()}); at least 10^{MIN_KEY_GUESSES_LOG10:.0f} are needed"
        )
    return None


def is_loopback(host: str) -> bool:
    """Demo mode serves loopback clients only: 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def require_loopback_or_allowed(host: str, settings: Settings | None = None) -> None:
    """Refuse to bind demo mode to a non-loopback address unless explicitly allowed."""
    allow = settings.demo_allow_remote if settings else _env_flag("LAGSCOPE_DEMO_ALLOW_REMOTE")
    if not is_loopback(host) and not allow:
        raise ValueError(
            f"demo mode binds to loopback only (got --host {host}); every caller is an admin "
            "there. Set LAGSCOPE_DEMO_ALLOW_REMOTE=1 to serve it to other machines anyway"
        )


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
