"""The thread state strings the cause rules match on, by flavor, and where each comes from.

MariaDB strings are as MariaDB 10.11.19 showed them on a live lab (CAUSES.md "Seen on MariaDB").
MySQL strings come from the reference manual, 8.0 / 8.4 / 9.x alike: "Replication I/O (Receiver)
Thread States" and "Replication SQL Thread States" (dev.mysql.com/doc/refman/8.4/en/
replica-io-thread-states.html, replica-sql-thread-states.html). From 8.0.26 the manual lists a new
spelling ("source" / "replica") next to the old one ("master" / "slave"), chosen by
``terminology_use_previous``: both are matched. Matching is on lower-cased text.
"""

from __future__ import annotations

import re

# Receiver (IO) thread, copying an event it has read into the relay log. MariaDB and MySQL
# before 8.0.26: "Queueing master event to the relay log"; MySQL 8.0.26+: "Queueing source event
# to the relay log".
IO_QUEUEING = ("queueing master event to the relay log", "queueing source event to the relay log")
# Receiver connected and waiting for the source to send: "Waiting for master to send event"
# (MariaDB, MySQL < 8.0.26) / "Waiting for source to send event" (MySQL 8.0.26+).
IO_WAITING = ("waiting for master to send event", "waiting for source to send event")

# Applier (SQL) thread with nothing left in the relay log: "Slave has read all relay log; waiting
# for more updates" (MariaDB, MySQL < 8.0.26) / "Replica has read all relay log; …" (8.0.26+).
SQL_IDLE = (
    "slave has read all relay log; waiting for more updates",
    "replica has read all relay log; waiting for more updates",
)
# Committing: MariaDB's serial SQL thread shows "Commit" (CAUSES.md, durability-bound serial
# apply); MySQL shows the general thread state "waiting for handler commit".
SQL_COMMIT = ("commit", "waiting for handler commit")

# A row event looking up its row. MariaDB 10.11: "Update_rows_log_event::find_row()" /
# "Delete_rows_log_event::find_row()" (also while a large transaction applies, and while the
# lookup waits on another session's row lock: the transaction state decides). MySQL 8.0+: the
# stages "Applying batch of row changes (update)" / "(delete)" (manual, "Monitoring Row-based
# Replication").
ROW_LOOKUP = (
    "update_rows_log_event::find_row",
    "delete_rows_log_event::find_row",
    "applying batch of row changes (update)",
    "applying batch of row changes (delete)",
)

# The same in both flavors (manual "General Thread States"; seen on MariaDB 10.11.19).
METADATA_LOCK_WAIT = "waiting for table metadata lock"

# A schema change being applied: MariaDB 10.11 showed "copy to tmp table" then "Enabling keys";
# the rest are the general thread states of ALTER TABLE / CREATE INDEX in both manuals.
DDL_STATES = (
    "copy to tmp table",
    "copying to tmp table",
    "enabling keys",
    "altering table",
    "preparing for alter table",
    "committing alter table to storage engine",
    "creating index",
    "repair by sorting",
    "repair with keycache",
    "discard_or_import_tablespace",
)

# Parallel workers waiting for an earlier transaction. MariaDB: "Waiting for prior transaction
# to commit" / "Waiting for prior transaction to start commit before starting next
# transaction". MySQL: "Waiting for preceding transaction to commit" (replica_preserve_commit_
# order), "Waiting for dependent transaction to commit" (LOGICAL_CLOCK dependency), and the 5.7 /
# 8.0 spelling "Waiting for its turn to commit".
WORKER_WAITING_FOR_PRIOR = (
    "waiting for prior transaction to commit",
    "waiting for prior transaction to start commit",
    "waiting for preceding transaction to commit",
    "waiting for dependent transaction to commit",
    "waiting for its turn to commit",
)
# Idle workers: MariaDB "Waiting for work from SQL thread"; MySQL "Waiting for an event from
# Coordinator".
WORKER_IDLE = ("waiting for work from sql thread", "waiting for an event from coordinator")

# Delayed by design: "Waiting until MASTER_DELAY seconds after master executed event" (MariaDB,
# MySQL < 8.0.26) / "Waiting until SOURCE_DELAY seconds after master executed event" (8.0.26+).
DELAY_WAIT = ("waiting until master_delay", "waiting until source_delay")


def matches(state: str | None, patterns: tuple[str, ...]) -> bool:
    """``state`` starts with one of ``patterns`` (lower-cased), e.g. "find_row()" with arguments."""
    text = (state or "").strip().lower()
    return bool(text) and text.startswith(patterns)


def is_commit(state: str | None) -> bool:
    # Exactly "Commit" / "waiting for handler commit": "Waiting for prior transaction to commit"
    # is a parallel worker waiting its turn, not a commit.
    return (state or "").strip().lower() in SQL_COMMIT


# A statement that changes the schema (the applier's INFO): what "DDL" means to an operator.
DDL_STATEMENT = re.compile(
    r"^\s*(ALTER\s+(ONLINE\s+)?(IGNORE\s+)?TABLE|CREATE\s+(UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?"
    r"INDEX|DROP\s+INDEX|OPTIMIZE\s+TABLE|TRUNCATE\s+(TABLE\s+)?|RENAME\s+TABLE|"
    r"(CREATE|DROP)\s+TABLE)",
    re.IGNORECASE,
)


def is_ddl_statement(statement: str | None) -> bool:
    return bool(statement) and DDL_STATEMENT.match(statement or "") is not None
