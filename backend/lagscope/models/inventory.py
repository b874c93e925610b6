"""What is monitored: clusters, their instances, and the replication channels found on them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Double,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from lagscope.models.base import Base
from lagscope.models.types import EpochMicros


class Cluster(Base):
    """One replication topology, polled as a unit."""

    __tablename__ = "clusters"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(128), unique=True)
    poll_interval_s: Mapped[float] = mapped_column(Double, default=1.0)
    # Variables to track on top of the built-in list (server names, e.g. "max_connections").
    extra_params: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Heartbeat: off | lagscope | pt-heartbeat. The writer uses its own narrowly granted login.
    heartbeat_mode: Mapped[str] = mapped_column(String(16), default="off")
    heartbeat_schema: Mapped[str] = mapped_column(String(64), default="lagscope")
    heartbeat_table: Mapped[str] = mapped_column(String(64), default="heartbeat")
    heartbeat_interval_s: Mapped[float] = mapped_column(Double, default=0.25)
    heartbeat_user: Mapped[str | None] = mapped_column(String(128), default=None)
    heartbeat_password_enc: Mapped[str | None] = mapped_column(Text, default=None)
    # The source the password was entered for ({instance_id, host, port, tls, tls_ca_path}):
    # it is never sent anywhere else (inventory/heartbeat_login.py). NULL with a password: it was
    # entered while the cluster had no source, and binds to the first source added.
    heartbeat_password_target: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # Why the stored password was dropped (the source moved, was deleted …), until re-entered.
    heartbeat_password_cleared: Mapped[str | None] = mapped_column(Text, default=None)
    # The writer's back-off after refused logins, as the instances' login_* below (any writer
    # process, or a restarted one, honours it).
    heartbeat_login_state: Mapped[str | None] = mapped_column(String(32), default=None)
    heartbeat_login_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    heartbeat_next_attempt_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # The writer's last beat while its row on the source has stopped advancing (None: it writes,
    # or the cluster has no heartbeat); decided each tick by analysis/heartbeat.py.
    heartbeat_stopped_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(EpochMicros)
    # The last recorded tick: when it read the servers, how long it took and which worker
    # process ran it. A next tick further off than its interval allows records a PollGap.
    last_tick_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_tick_s: Mapped[float | None] = mapped_column(Double, default=None)
    last_tick_by: Mapped[str | None] = mapped_column(String(128), default=None)
    # The last time a tick of this cluster expired in the queue before a worker took it.
    tick_expired_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # Bumped by every change of the cluster, its instances or channels made through the ORM
    # (the API, the inventory, a login reset; models/revisions.py): a poll owner keeping the
    # cluster in memory between ticks reloads it when this moved (ingest/tick_cache.py).
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    instances: Mapped[list[Instance]] = relationship(
        back_populates="cluster", cascade="all, delete-orphan", order_by="Instance.id"
    )


class Instance(Base):
    """One monitored server. The password is stored encrypted and never leaves the services."""

    __tablename__ = "instances"
    __table_args__ = (UniqueConstraint("cluster_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    cluster_id: Mapped[int] = mapped_column(
        ForeignKey("clusters.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(128))
    host: Mapped[str] = mapped_column(String(255))
    port: Mapped[int] = mapped_column(Integer, default=3306)
    user: Mapped[str] = mapped_column(String(128))
    password_enc: Mapped[str] = mapped_column(Text, default="")
    region: Mapped[str] = mapped_column(String(64), default="")
    role: Mapped[str] = mapped_column(String(16), default="replica")  # source | replica
    # How every connection to this server is protected (collectors/connection.py): preferred |
    # required | verify_ca | verify_identity; the CA bundle (a path on the workers) for verify_*,
    # NULL meaning the system's CAs. server_default: rows older than the column get preferred.
    tls: Mapped[str] = mapped_column(String(16), default="preferred", server_default="preferred")
    tls_ca_path: Mapped[str | None] = mapped_column(String(1024), default=None)
    # The server's RSA public key (PEM on the workers) for sha256_password/caching_sha2 logins
    # without TLS; NULL: the password never goes to a key the server sends (connection.py).
    server_public_key_path: Mapped[str | None] = mapped_column(String(1024), default=None)

    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    # Learned from the server.
    flavor: Mapped[str | None] = mapped_column(String(16), default=None)
    version: Mapped[str | None] = mapped_column(String(64), default=None)
    server_id: Mapped[int | None] = mapped_column(Integer, default=None)
    server_uuid: Mapped[str | None] = mapped_column(String(64), default=None)
    # Poll state kept in the store (not in a worker's memory) so any worker can take over.
    last_polled_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_ok_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    # The failed poll's error kind (an errors.py class name, PollFailed …); None after a poll
    # that answered.
    last_error_kind: Mapped[str | None] = mapped_column(String(32), default=None)
    clock_offset_s: Mapped[float | None] = mapped_column(Double, default=None)
    clock_resolution_s: Mapped[float | None] = mapped_column(Double, default=None)
    gtid_executed: Mapped[str | None] = mapped_column(Text, default=None)
    gtid_progress: Mapped[int | None] = mapped_column(BigInteger, default=None)
    last_counters: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    # Digest of the parameter values last stored: a poll compares digests and reads the
    # param_values rows only when something changed (parameters rarely change).
    params_digest: Mapped[str | None] = mapped_column(String(64), default=None)
    # The last poll that read the parameters: a change happened after it.
    params_read_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # Logging in: None until a poll tried, then "ok", "access_denied" (the server refused the
    # login; retried with back-off, not every tick, so the account is never locked) or
    # "credentials_unreadable" (the stored password decrypts with no secret key). In the store
    # so every worker, and a restarted one, honours the back-off.
    login_state: Mapped[str | None] = mapped_column(String(32), default=None)
    login_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)

    cluster: Mapped[Cluster] = relationship(back_populates="instances")
    channels: Mapped[list[Channel]] = relationship(
        back_populates="instance", cascade="all, delete-orphan", order_by="Channel.name"
    )

    @property
    def has_password(self) -> bool:
        """Whether a password is stored (the API says this, never the password)."""
        return bool(self.password_enc)


class Channel(Base):
    """One replication stream on a replica; the latest GTID sets live here, not per sample."""

    __tablename__ = "channels"
    __table_args__ = (UniqueConstraint("instance_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(64), default="")
    retrieved_gtids: Mapped[str | None] = mapped_column(Text, default=None)
    executed_gtids: Mapped[str | None] = mapped_column(Text, default=None)
    # Latest errors and the source this channel reads from, as the replica reported them: kept
    # here, not per sample (they change rarely and would bloat the series).
    last_io_errno: Mapped[int] = mapped_column(Integer, default=0)
    last_io_error: Mapped[str | None] = mapped_column(Text, default=None)
    last_sql_errno: Mapped[int] = mapped_column(Integer, default=0)
    last_sql_error: Mapped[str | None] = mapped_column(Text, default=None)
    source_server_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    source_host: Mapped[str | None] = mapped_column(String(255), default=None)
    source_port: Mapped[int | None] = mapped_column(Integer, default=None)
    # SQL_Delay as last reported: alerts judge a delayed replica on lag minus its delay.
    sql_delay_s: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The newest poll's errant GTIDs (analysis/errant.py; '' when none, NULL when unknown): the
    # count is per sample, the set only here.
    errant_gtids: Mapped[str | None] = mapped_column(Text, default=None)
    applied_progress: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # The per-poll classes of the last few polls (oldest first, comma-separated codes) and the
    # verdict they gave: the verdict is made over a window, and any worker may poll next.
    recent_classes: Mapped[str] = mapped_column(String(32), default="")
    verdict: Mapped[int | None] = mapped_column(Integer, default=None)
    last_sample_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)
    # Why it is behind (analysis/causes): the findings of the newest poll (JSON list, strongest
    # first, [] when none), what diagnosis and the episode tracker remember between polls, and
    # the episode in progress (null when none). Any worker may poll next.
    current_causes: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, default=list)
    diagnosis_memory: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=dict)
    episode_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=dict)
    episode_id: Mapped[int | None] = mapped_column(Integer, default=None)
    # The newest poll's time to catch up with its band (analysis.eta.eta_to_json; null when
    # unknown, e.g. the replica did not answer) and the recent rates the band is made of.
    eta: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    eta_memory: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    first_seen_at: Mapped[datetime] = mapped_column(EpochMicros)
    gone_at: Mapped[datetime | None] = mapped_column(EpochMicros, default=None)

    instance: Mapped[Instance] = relationship(back_populates="channels")
