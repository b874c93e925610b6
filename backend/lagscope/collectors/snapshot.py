"""The normalized, flavor-neutral reading of one server: what every collector returns.

Nothing in here carries a server column name or a version check; it speaks *source* and
*replica*. All classes are frozen so a snapshot can be shared across threads and cached.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.gtid import Gtids, GtidTexts


class IoState(enum.StrEnum):
    """The receiver (IO) thread as the server reports it; MariaDB's ``Preparing`` kept distinct."""

    YES = "yes"
    CONNECTING = "connecting"
    PREPARING = "preparing"
    NO = "no"


@dataclass(frozen=True, slots=True)
class ChannelStatus:
    """One replication channel (MySQL channel / MariaDB connection) at one instant."""

    channel: str
    io_state: IoState
    sql_running: bool
    # The server's own figure; None when the server says NULL (stopped or unknown). Never 0-filled.
    seconds_behind_source: int | None
    source_host: str | None = None
    source_port: int | None = None
    source_server_id: int | None = None
    source_uuid: str | None = None
    source_log_file: str | None = None
    read_source_log_pos: int | None = None
    relay_source_log_file: str | None = None
    exec_source_log_pos: int | None = None
    relay_log_file: str | None = None
    relay_log_pos: int | None = None
    relay_log_space: int | None = None
    sql_delay: int = 0
    sql_remaining_delay: int | None = None
    io_thread_state: str = ""
    sql_thread_state: str = ""
    last_io_errno: int = 0
    last_io_error: str = ""
    last_io_error_at: str = ""
    last_sql_errno: int = 0
    last_sql_error: str = ""
    last_sql_error_at: str = ""
    # GTIDs received into the relay log / executed, as server text with whitespace removed:
    # MySQL sets (Retrieved/Executed_Gtid_Set), MariaDB positions (Gtid_IO_Pos / gtid_slave_pos).
    retrieved_gtids: str = ""
    executed_gtids: str = ""
    # 'No' | 'Slave_Pos' | 'Current_Pos' (MariaDB) or 'Auto_Position' / 'No' (MySQL).
    using_gtid: str = "No"
    parallel_mode: str | None = None
    retried_transactions: int | None = None
    # MariaDB 11.6+ Master_Slave_time_diff; None elsewhere.
    source_replica_time_diff: int | None = None

    @property
    def io_running(self) -> bool:
        return self.io_state is IoState.YES

    @property
    def broken(self) -> bool:
        """A thread stopped by an error (not by an operator's STOP)."""
        return (self.last_sql_errno != 0 and not self.sql_running) or (
            self.last_io_errno != 0 and self.io_state is not IoState.YES
        )


@dataclass(frozen=True, slots=True)
class SourceStatus:
    """The instance's own binary log: where it writes, what it has executed."""

    binlog_file: str
    binlog_position: int
    # MySQL: SHOW … STATUS Executed_Gtid_Set (None on MariaDB, which has no such column).
    gtid_executed: str | None = None


@dataclass(frozen=True, slots=True)
class GtidState:
    """Server-wide GTID state. MySQL fills ``executed``; MariaDB fills its three positions.

    ``executed`` is what this server has executed in the form its flavor uses for arithmetic
    (MySQL ``@@gtid_executed``; MariaDB ``@@gtid_binlog_pos`` for a source), so an analysis can
    compare a source and a replica without knowing the flavor.
    """

    executed: str = ""
    binlog_pos: str | None = None
    slave_pos: str | None = None
    current_pos: str | None = None
    strict_mode: bool | None = None
    domain_id: int | None = None
    gtid_mode: str | None = None


@dataclass(frozen=True, slots=True)
class ClockReading:
    """Server clock minus poller clock, seconds; the true offset lies within ± ``resolution_s``."""

    offset_s: float
    resolution_s: float


@dataclass(frozen=True, slots=True)
class HeartbeatRow:
    """One heartbeat row visible on a server: who wrote it and when (writer's clock, epoch s)."""

    server_id: int
    ts: float


@dataclass(frozen=True, slots=True)
class HeartbeatReading:
    """All heartbeat rows visible on a server, with the server's own clock at the read."""

    rows: tuple[HeartbeatRow, ...]
    server_now: float
    table: str

    def newest(self, server_id: int | None = None) -> HeartbeatRow | None:
        rows = [r for r in self.rows if server_id is None or r.server_id == server_id]
        return max(rows, key=lambda r: r.ts, default=None)


@dataclass(frozen=True, slots=True)
class ApplierWorker:
    """One applier thread: a MySQL P_S worker row or a MariaDB parallel worker thread."""

    channel: str
    worker_id: int
    thread_id: int | None
    state: str
    last_applied_trx: str = ""
    applying_trx: str = ""
    # Epoch seconds (source clock for *_commit_ts, replica clock for *_apply_ts); None = unset.
    last_applied_original_commit_ts: float | None = None
    last_applied_end_apply_ts: float | None = None
    applying_original_commit_ts: float | None = None
    applying_start_apply_ts: float | None = None
    last_error_number: int = 0
    last_error_message: str = ""
    # MariaDB processlist: how long the thread has been in ``state``.
    state_time_s: float | None = None
    # Holding a transaction at the read (MySQL 8.0+: APPLYING_TRANSACTION set; MariaDB: any
    # state but waiting for work); None where the server cannot tell (MySQL 5.7).
    busy: bool | None = None
    # How long an idle worker has been idle (replica clock), when the server says; 0 when busy.
    idle_s: float | None = None
    # The statement the thread runs (MariaDB PROCESSLIST INFO: an ALTER shows here), bounded.
    statement: str = ""


# Cause readings (docs/causes.md): read only while a channel is behind or its applier is busy on one
# transaction across polls; None on a snapshot whose poll did not take them. Server text in
# here (statements, user names, hosts) is bounded to EVIDENCE_TEXT_MAX characters by the parser.
EVIDENCE_TEXT_MAX = 500


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    """The InnoDB transaction an applier thread holds (``INNODB_TRX`` / MySQL's ``data_locks``
    side): started (server clock, epoch s), rows modified so far, and whether it waits on a lock."""

    thread_id: int  # processlist id of the applier thread holding it
    trx_id: str
    state: str  # RUNNING / LOCK WAIT / ROLLING BACK / COMMITTING, as the server says
    started_at: float | None = None
    rows_modified: int | None = None
    rows_locked: int | None = None
    lock_wait_started_at: float | None = None
    operation: str = ""  # trx_operation_state, e.g. "starting index read"
    gtid: str = ""  # MySQL APPLYING_TRANSACTION when known


@dataclass(frozen=True, slots=True)
class BlockingSession:
    """A session on the replica that holds what an applier thread waits for.

    ``certain`` is False for a metadata-lock *candidate* (MariaDB without the
    METADATA_LOCK_INFO plugin: a session idle in a transaction that began before the wait)."""

    thread_id: int
    blocked_thread_id: int
    lock: str  # "row" | "metadata"
    certain: bool = True
    user: str = ""
    host: str = ""
    command: str = ""  # Sleep, Query, …
    time_s: float | None = None  # in its current command/state
    state: str = ""
    statement: str = ""  # its current (or last known) statement, bounded
    trx_started_at: float | None = None
    object_name: str = ""  # schema.table of the lock, when the server says


@dataclass(frozen=True, slots=True)
class RowEventTable:
    """The table the applier's current row event works on (the relay log's Table_map at the
    applier's position) and whether it has a key row lookups can use (cached per table)."""

    channel: str
    schema: str
    table: str
    has_primary_key: bool | None = None  # None: not checked (privilege, not found)
    has_usable_key: bool | None = None  # primary key or a unique key over NOT NULL columns
    event: str = ""  # the row event type at the position (Update_rows, Delete_rows, …)


@dataclass(frozen=True, slots=True)
class ReceiveProgress:
    """MySQL 8.0+ ``replication_connection_status`` receive-side timestamps (epoch s; None
    unset): what the receiver thread is queueing and last queued."""

    channel: str
    queueing_trx: str = ""
    queueing_original_commit_ts: float | None = None
    queueing_start_ts: float | None = None
    last_queued_trx: str = ""
    last_queued_original_commit_ts: float | None = None
    last_queued_end_ts: float | None = None


@dataclass(frozen=True, slots=True)
class CauseEvidence:
    """What the cause readings saw on one replica in one poll. ``problems``: a reading that
    could not be taken and what it needs (``{"blockers": "needs PROCESS"}``)."""

    transactions: tuple[OpenTransaction, ...] = ()
    blockers: tuple[BlockingSession, ...] = ()
    tables: tuple[RowEventTable, ...] = ()
    receive: tuple[ReceiveProgress, ...] = ()
    problems: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def _empty_params() -> Mapping[str, str | None]:
    return MappingProxyType({})


def _empty_counters() -> Mapping[str, int]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class InstanceSnapshot:
    """One poll of one instance: all channels, its binlog, GTIDs, parameters and counters."""

    server: str
    flavor: ServerFlavor
    dialect: str
    taken_at: datetime
    round_trip_s: float
    server_id: int
    server_uuid: str | None
    read_only: bool
    clock: ClockReading
    gtid: GtidState
    channels: tuple[ChannelStatus, ...] = ()
    source: SourceStatus | None = None
    # Server variable name (as the server spells it) → value as text ('ON'/'OFF' for booleans).
    params: Mapping[str, str | None] = field(default_factory=_empty_params)
    params_read: bool = False  # False when this poll skipped the (slow) parameter reading
    counters: Mapping[str, int] = field(default_factory=_empty_counters)
    heartbeat: HeartbeatReading | None = None
    workers: tuple[ApplierWorker, ...] = ()
    # MySQL 8.0+ per-channel applier lag from P_S commit timestamps (docs/replication.md).
    applier_lag_s: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    # Cause readings, when this poll took them (collectors/cause_readings/); None otherwise.
    evidence: CauseEvidence | None = None
    # Readings that could not be taken this time (a missing privilege, a missing heartbeat table),
    # by reading name; the rest of the snapshot is still good.
    problems: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # This server's GTID texts as parsed during the tick, so each is parsed once (see gtids()).
    parsed: GtidTexts = field(default_factory=GtidTexts, compare=False, repr=False)

    @property
    def is_replica(self) -> bool:
        return bool(self.channels)

    def gtids(self, text: str) -> Gtids:
        """One of this server's GTID texts (its executed set, a channel's retrieved or executed
        set) parsed in its product's form, once per snapshot; :class:`ValueError` when it does
        not parse."""
        return self.parsed.parse(self.flavor.product, text)

    def channel(self, name: str) -> ChannelStatus | None:
        return next((c for c in self.channels if c.channel == name), None)
