"""The table of a replica's applier thread states, by family, and where each string comes from.

One table, :data:`APPLIER_STATES`, lists what the applier threads (the SQL thread, MySQL's
coordinator, the parallel workers) show in ``PROCESSLIST.STATE`` / ``Slave_SQL_State``, each
with its family (what the applier waits on or does), the threads and flavors that show it, and
its source. The rules' own subsets (idle, committing, a row lookup…) are read off the table by
tag (:mod:`.states`), so a string is spelled once.

Sources, as cited per row:

- ``lab``: MariaDB 10.11.19 on the live lab (``tests/fixtures/causes/mariadb1011_incidents.json``
  and the live tests).
- ``mariadb``: MariaDB's thread-state lists ("Replica SQL Thread States", "General Thread
  States") and the stage names in its server source (``sql/rpl_parallel.cc``, ``sql/slave.cc``,
  ``sql/mdl.cc``'s wait names per lock namespace, ``sql/log_event_server.cc``'s row events).
- ``mysql``: the MySQL reference manual, 8.0 / 8.4 / 9.x alike: "Replication SQL Thread States",
  "General Thread States", "Monitoring Row-based Replication". From 8.0.26 the manual lists a new
  spelling ("source" / "replica") next to the old one ("master" / "slave"), chosen by
  ``terminology_use_previous``: both are listed. MySQL's metadata-lock waits are named per lock
  namespace like MariaDB's (``Waiting for <kind> lock``).

Matching is on lower-cased text, by prefix ("find_row()" with arguments, "… for more updates").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Family(enum.StrEnum):
    """What an applier thread's state says it is doing, in an operator's terms."""

    LOCK = "lock"  # waiting on a lock another session holds
    COMMIT_ORDER = "commit_order"  # waiting for an earlier transaction (parallel apply)
    RELAY_LOG = "relay_log"  # reading the relay log, or waiting for the next event in it
    FLUSH = "flush"  # committing: the flush / fsync of the redo log and binlog
    ROWS = "rows"  # applying row changes
    DDL = "ddl"  # applying a schema change
    IDLE = "idle"  # nothing to apply
    DELAY = "delay"  # waiting out a configured delay
    OTHER = "other"  # known, short, a step of any statement (opening tables, cleaning up…)


# Which threads show a state: the serial SQL thread, MySQL's coordinator (the SQL thread when
# workers apply), a parallel worker.
SQL = "sql"
COORDINATOR = "coordinator"
WORKER = "worker"
ANY_APPLIER = frozenset({SQL, COORDINATOR, WORKER})
SQL_OR_COORDINATOR = frozenset({SQL, COORDINATOR})
WORKERS_AND_SERIAL = frozenset({SQL, WORKER})  # what applies transactions itself
BOTH = frozenset({"mariadb", "mysql"})
MARIADB = frozenset({"mariadb"})
MYSQL = frozenset({"mysql"})


@dataclass(frozen=True, slots=True)
class State:
    text: str  # lower-cased prefix
    family: Family
    threads: frozenset[str]
    flavors: frozenset[str]
    source: str
    # For a lock: its kind in the words of the finding ("row", "metadata", "global read",
    # "backup", "table-level", "user"…); ``tag``: the rules' own subsets.
    lock: str | None = None
    tag: str | None = None


_S = State
_L = Family.LOCK

APPLIER_STATES: tuple[State, ...] = (
    # --- idle, and the relay log ----------------------------------------------------------
    _S("slave has read all relay log; waiting for more updates", Family.IDLE, SQL_OR_COORDINATOR,
       BOTH, "lab; mysql < 8.0.26", tag="sql_idle"),
    _S("replica has read all relay log; waiting for more updates", Family.IDLE,
       SQL_OR_COORDINATOR, MYSQL, "mysql 8.0.26+", tag="sql_idle"),
    _S("slave has read all relay log; waiting for the slave i/o thread to update it",
       Family.IDLE, SQL_OR_COORDINATOR, BOTH, "mariadb; mysql 5.x", tag="sql_idle"),
    _S("waiting for work from sql thread", Family.IDLE, frozenset({WORKER}), MARIADB,
       "lab (rpl_parallel.cc)", tag="worker_idle"),
    _S("waiting for an event from coordinator", Family.IDLE, frozenset({WORKER}), MYSQL,
       "mysql", tag="worker_idle"),
    _S("waiting for the next event in relay log", Family.RELAY_LOG, SQL_OR_COORDINATOR, BOTH,
       "mariadb; mysql"),
    _S("reading event from the relay log", Family.RELAY_LOG, SQL_OR_COORDINATOR, BOTH,
       "mariadb; mysql"),
    # --- parallel apply: waiting for an earlier transaction, or for the workers ---------------
    # MariaDB workers: "Waiting for prior transaction to commit" / "… to start commit before
    # starting next transaction"; MySQL: "Waiting for preceding transaction to commit"
    # (replica_preserve_commit_order), "Waiting for dependent transaction to commit"
    # (LOGICAL_CLOCK), 5.7's "Waiting for its turn to commit".
    _S("waiting for prior transaction to commit", Family.COMMIT_ORDER, frozenset({WORKER}),
       MARIADB, "lab", tag="worker_prior"),
    _S("waiting for prior transaction to start commit", Family.COMMIT_ORDER,
       frozenset({WORKER}), MARIADB, "lab", tag="worker_prior"),
    _S("waiting for preceding transaction to commit", Family.COMMIT_ORDER, frozenset({WORKER}),
       MYSQL, "mysql", tag="worker_prior"),
    _S("waiting for dependent transaction to commit", Family.COMMIT_ORDER, ANY_APPLIER, MYSQL,
       "mysql", tag="worker_prior"),
    _S("waiting for its turn to commit", Family.COMMIT_ORDER, frozenset({WORKER}), MYSQL,
       "mysql 5.7 / 8.0", tag="worker_prior"),
    _S("waiting for worker threads to be idle", Family.COMMIT_ORDER, SQL_OR_COORDINATOR, MARIADB,
       "mariadb (rpl_parallel.cc: before an event that must apply alone)"),
    _S("waiting for other master connection to process the same gtid", Family.COMMIT_ORDER,
       ANY_APPLIER, MARIADB, "mariadb (multi-source, the same GTID domain)"),
    # The coordinator has handed out all it may: the workers are the limit.
    _S("waiting for room in worker thread event queue", Family.ROWS, SQL_OR_COORDINATOR, MARIADB,
       "mariadb (rpl_parallel.cc)"),
    _S("waiting for slave workers to free pending events", Family.ROWS, SQL_OR_COORDINATOR, MYSQL,
       "mysql < 8.0.26"),
    _S("waiting for replica workers to free pending events", Family.ROWS, SQL_OR_COORDINATOR,
       MYSQL, "mysql 8.0.26+"),
    _S("waiting for slave worker queue", Family.ROWS, SQL_OR_COORDINATOR, MYSQL,
       "mysql < 8.0.26"),
    _S("waiting for replica worker queue", Family.ROWS, SQL_OR_COORDINATOR, MYSQL,
       "mysql 8.0.26+"),
    _S("waiting for slave worker to release partition", Family.COMMIT_ORDER, SQL_OR_COORDINATOR,
       MYSQL, "mysql < 8.0.26 (DATABASE type)"),
    _S("waiting for replica worker to release partition", Family.COMMIT_ORDER,
       SQL_OR_COORDINATOR, MYSQL, "mysql 8.0.26+ (DATABASE type)"),
    # --- committing: the flush and fsync -------------------------------------------------------
    # Exactly "Commit" (MariaDB's serial SQL thread, durable serial apply in docs/causes.md) /
    # "waiting for handler commit" (MySQL's general state): see is_commit.
    _S("commit", Family.FLUSH, WORKERS_AND_SERIAL, MARIADB, "lab", tag="commit"),
    _S("waiting for handler commit", Family.FLUSH, WORKERS_AND_SERIAL, MYSQL, "mysql",
       tag="commit"),
    _S("query end", Family.FLUSH, WORKERS_AND_SERIAL, BOTH, "mariadb; mysql (general states)"),
    # --- applying rows ----------------------------------------------------------------------------
    # A row event looking up its row: MariaDB 10.11's find_row() (also while the lookup waits on
    # another session's row lock: the transaction state decides); MySQL 8.0+'s stages.
    _S("update_rows_log_event::find_row", Family.ROWS, WORKERS_AND_SERIAL, MARIADB, "lab",
       tag="row_lookup"),
    _S("delete_rows_log_event::find_row", Family.ROWS, WORKERS_AND_SERIAL, MARIADB, "lab",
       tag="row_lookup"),
    _S("applying batch of row changes (update)", Family.ROWS, WORKERS_AND_SERIAL, MYSQL, "mysql",
       tag="row_lookup"),
    _S("applying batch of row changes (delete)", Family.ROWS, WORKERS_AND_SERIAL, MYSQL, "mysql",
       tag="row_lookup"),
    _S("applying batch of row changes (write)", Family.ROWS, WORKERS_AND_SERIAL, MYSQL, "mysql"),
    _S("write_rows_log_event::write_row", Family.ROWS, WORKERS_AND_SERIAL, MARIADB,
       "mariadb (log_event_server.cc)"),
    _S("write_rows_log_event::ha_write_row", Family.ROWS, WORKERS_AND_SERIAL, MARIADB,
       "mariadb (log_event_server.cc)"),
    _S("update_rows_log_event::ha_update_row", Family.ROWS, WORKERS_AND_SERIAL, MARIADB,
       "mariadb (log_event_server.cc)"),
    _S("delete_rows_log_event::ha_delete_row", Family.ROWS, WORKERS_AND_SERIAL, MARIADB,
       "mariadb (log_event_server.cc)"),
    _S("executing", Family.ROWS, WORKERS_AND_SERIAL, BOTH, "mariadb; mysql (general states)"),
    _S("updating", Family.ROWS, WORKERS_AND_SERIAL, BOTH, "mariadb; mysql (general states)"),
    _S("sending data", Family.ROWS, WORKERS_AND_SERIAL, BOTH, "mariadb; mysql 5.7"),
    _S("system lock", Family.ROWS, WORKERS_AND_SERIAL, BOTH,
       "mysql (a row event taking its table's lock); mariadb"),
    _S("making temporary file", Family.ROWS, WORKERS_AND_SERIAL, BOTH,
       "mysql; mariadb (LOAD DATA replayed)"),
    # --- applying a schema change ------------------------------------------------------------
    # MariaDB 10.11 showed "copy to tmp table" then "Enabling keys"; the rest are the general
    # thread states of ALTER TABLE / CREATE INDEX in both manuals.
    *(
        _S(text, Family.DDL, WORKERS_AND_SERIAL, BOTH, source, tag="ddl")
        for text, source in (
            ("copy to tmp table", "lab"),
            ("copying to tmp table", "mariadb; mysql"),
            ("enabling keys", "lab"),
            ("altering table", "mysql"),
            ("preparing for alter table", "mysql"),
            ("committing alter table to storage engine", "mysql"),
            ("creating index", "mariadb; mysql"),
            ("repair by sorting", "mariadb; mysql"),
            ("repair with keycache", "mariadb; mysql"),
            ("discard_or_import_tablespace", "mariadb; mysql"),
        )
    ),
    # Brief steps of a replicated CREATE TABLE / copying ALTER: a schema change, but too short to
    # name one from a single poll (not among the rules' "ddl" states).
    _S("creating table", Family.DDL, WORKERS_AND_SERIAL, BOTH, "mariadb; mysql"),
    _S("rename result table", Family.DDL, WORKERS_AND_SERIAL, BOTH, "mariadb; mysql"),
    # --- delayed by design ---------------------------------------------------------------------
    _S("waiting until master_delay", Family.DELAY, SQL_OR_COORDINATOR, BOTH,
       "mariadb; mysql < 8.0.26", tag="delay"),
    _S("waiting until source_delay", Family.DELAY, SQL_OR_COORDINATOR, MYSQL, "mysql 8.0.26+",
       tag="delay"),
    # --- waiting on a lock another session holds --------------------------------------------
    # The metadata-lock waits are named per lock namespace (mdl.cc in both servers).
    _S("waiting for table metadata lock", _L, ANY_APPLIER, BOTH, "lab; mysql",
       lock="metadata", tag="mdl_table"),
    _S("waiting for schema metadata lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql",
       lock="schema metadata"),
    _S("waiting for stored function metadata lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql",
       lock="stored function metadata"),
    _S("waiting for stored procedure metadata lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql",
       lock="stored procedure metadata"),
    _S("waiting for stored package body metadata lock", _L, ANY_APPLIER, MARIADB, "mariadb",
       lock="package body metadata"),
    _S("waiting for trigger metadata lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql",
       lock="trigger metadata"),
    _S("waiting for event metadata lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql",
       lock="event metadata"),
    _S("waiting for tablespace metadata lock", _L, ANY_APPLIER, MYSQL, "mysql 8.0+",
       lock="tablespace metadata"),
    # FLUSH TABLES WITH READ LOCK: MySQL's writers wait for the global read lock, committers for
    # the commit lock; MariaDB 10.4+ implements it (and BACKUP STAGE) with the backup lock.
    _S("waiting for global read lock", _L, ANY_APPLIER, MYSQL, "mysql; mariadb < 10.4",
       lock="global read"),
    _S("waiting for commit lock", _L, ANY_APPLIER, MYSQL, "mysql; mariadb < 10.4",
       lock="global read"),
    _S("waiting for backup lock", _L, ANY_APPLIER, BOTH,
       "lab (FLUSH TABLES WITH READ LOCK, BACKUP STAGE); mysql 8.0+ (LOCK INSTANCE FOR BACKUP)",
       lock="backup"),
    # MariaDB's parallel replication pauses for FLUSH TABLES WITH READ LOCK: its workers wait.
    _S("waiting due to global read lock", _L, ANY_APPLIER, MARIADB,
       "mariadb (rpl_parallel.cc, a worker paused for FLUSH TABLES WITH READ LOCK)",
       lock="global read"),
    # LOCK TABLES … on a table whose engine locks whole tables, or any LOCK TABLES … WRITE.
    _S("waiting for table level lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql",
       lock="table-level"),
    _S("waiting for table flush", _L, ANY_APPLIER, BOTH, "mariadb; mysql (FLUSH TABLES)",
       lock="table flush"),
    # GET_LOCK() in a statement-based event: the lock is a session's.
    _S("user lock", _L, ANY_APPLIER, BOTH, "mariadb; mysql (GET_LOCK)", lock="user"),
    _S("waiting for locking service lock", _L, ANY_APPLIER, MYSQL, "mysql", lock="locking service"),
    # MySQL 8.0's other metadata-lock namespaces (mdl.cc's wait names), and Percona Server's
    # LOCK BINLOG FOR BACKUP.
    *(
        _S(f"waiting for {kind} lock", _L, ANY_APPLIER, MYSQL, "mysql 8.0+ (mdl.cc)", lock=kind)
        for kind in (
            "foreign key metadata",
            "check constraint metadata",
            "column statistics",
            "resource groups metadata",
            "srid metadata",
            "acl cache",
        )
    ),
    _S("waiting for binlog lock", _L, ANY_APPLIER, MYSQL, "percona server (LOCK BINLOG FOR BACKUP)",
       lock="binlog"),
    # --- the steps of any statement ---------------------------------------------------------
    *(
        _S(text, Family.OTHER, ANY_APPLIER, BOTH, "mariadb; mysql (general states)")
        for text in (
            "opening tables",
            "closing tables",
            "checking permissions",
            "init",
            "starting",
            "freeing items",
            "cleaning up",
            "end",
            "unlocking tables",
            "reset for next command",
            "after create",
            "statistics",
            "preparing",
            "optimizing",
            "converting heap to myisam",
            "creating tmp table",
            "removing tmp table",
            "checking table",
            "waiting for slave mutex on exit",
            "waiting for replica mutex on exit",
        )
    ),
)  # fmt: skip
