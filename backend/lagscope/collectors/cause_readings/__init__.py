"""Cause readings (docs/causes.md): what holds a replica's applier, read only while it is behind.

One module per reading, each a statement and its parse; the registry (``collectors/readings.py``)
decides when they are sent (:func:`behind`, ``trigger.py``: the previous poll showed a channel
behind or an applier busy) and folds the parts into one :class:`CauseEvidence` per poll. This
package re-exports every reading's names, as the registry and the tests use them.

SQL (by dialect). No statement reads more than one ``information_schema`` table, nor one of them
with any other table: each is read alone, narrowed and bounded, and the joins are made in
Python (``*_records`` functions, pure), because MariaDB 10.11.19 crashed in the clean-up of the
temporary tables it fills for such joins (``common.py``, "each table read alone"; docs/causes.md).
- The sessions (MariaDB, MySQL 5.7; ``sessions.py``): one ``PROCESSLIST`` read per poll for every
  reading below, the server's own threads first (``USER='system user'``: the replication
  threads), then the client sessions longest in their command, at most ``SESSIONS_MAX``.
- The applier threads' InnoDB transactions (``transactions.py``): ``INNODB_TRX`` rows of the
  replication threads (MySQL 8.0+: of ``performance_schema.threads`` by name, with the worker's
  ``APPLYING_TRANSACTION``). Needs PROCESS.
- Row-lock blockers (``row_locks.py``): MariaDB and MySQL 5.7 ``INNODB_LOCK_WAITS`` → blocking trx
  (``INNODB_TRX``) → its session, the blocking lock's table (``INNODB_LOCKS``); MySQL 8.0+
  ``performance_schema.data_lock_waits`` ⋈ ``threads`` ⋈ ``data_locks`` (5.7's I_S tables are
  gone there), then ``INNODB_TRX``.
- Metadata-lock blockers (``metadata_locks.py``; the backup lock's, ``backup_locks.py``): MySQL
  ``performance_schema.metadata_locks`` (PENDING for an applier thread, GRANTED to another thread on
  the same object). MariaDB has no wait table: with the ``METADATA_LOCK_INFO`` plugin, the sessions
  holding a table lock on a table the waiting applier also holds one on (exact); without it, the
  sessions in a transaction that began before the wait (candidates, ``certain=False``). The plugin
  is probed once per connection.
- The sessions that could hold what an applier waits for (``lock_sessions.py``; any lock the
  server names without a holder: a global read or backup lock, LOCK TABLES, a user lock, a state
  no rule knows): while an applier thread is neither idle nor waiting its turn, the client
  sessions longest in their current command (the sessions reading; MySQL 8.0+
  ``performance_schema.threads``), candidates only; the rules keep those older than the wait.
  Needs PROCESS.
- The current row event's table (``relay_events.py``): ``SHOW RELAYLOG … EVENTS IN <file> FROM
  <pos> LIMIT 10`` at the channel's applier position → the first ``Table_map``
  (``table_id: N (db.table)``); MariaDB needs REPLICA MONITOR, MySQL REPLICATION SLAVE. Whether
  that table has a key row lookups can use (``table_keys.py``): ``information_schema`` for that
  one table (``TABLES``, then ``STATISTICS``; InnoDB's dictionary by the table's id), cached per
  table for the connection (never a schema scan, never ``SHOW CREATE TABLE``:
  replication-manager#728).
- MySQL 8.0+ receive side (``receive.py``): ``performance_schema.replication_connection_status``
  ``QUEUEING_TRANSACTION*`` / ``LAST_QUEUED_TRANSACTION*``.

Server text (statements, users, hosts, names) is bounded to ``EVIDENCE_TEXT_MAX``; names the
server gave us go back into SQL only through :func:`sql_string`.
"""

from __future__ import annotations

from lagscope.collectors.cause_readings.backup_locks import (
    backup_holder_records,
    backup_holders_statements,
    parse_backup_holders,
)
from lagscope.collectors.cause_readings.common import (
    BACKUP_HOLDERS_MAX,
    LOCK_WAITS_MAX,
    LOCKS_MAX,
    MDL_LOCKS_MAX,
    RELAY_CHANNELS_MAX,
    RELAY_EVENTS_LIMIT,
    SESSIONS_MAX,
    TRX_MAX,
    CauseMemory,
    EvidenceParts,
    Record,
    sql_string,
)
from lagscope.collectors.cause_readings.lock_sessions import (
    LOCK_SESSIONS_MAX,
    SESSION_LOCK,
    lock_session_records,
    lock_sessions_statements,
    parse_lock_sessions,
)
from lagscope.collectors.cause_readings.metadata_locks import (
    MDL_KINDS,
    MDL_PLUGIN_PROBE_SQL,
    mdl_blockers,
    mdl_blockers_statements,
    mdl_candidate_records,
    mdl_holder_records,
    mdl_probe_statement,
    mdl_problem,
    parse_mdl_blockers,
    parse_mdl_probe,
    with_trx_started,
)
from lagscope.collectors.cause_readings.receive import parse_receive, receive_statement
from lagscope.collectors.cause_readings.relay_events import (
    parse_relay_events,
    relay_events_statement,
    relay_positions,
)
from lagscope.collectors.cause_readings.row_locks import (
    blocking_trx_records,
    parse_row_blockers,
    row_blocker_records,
    row_blockers,
    row_blockers_statements,
)
from lagscope.collectors.cause_readings.sessions import (
    TRX_STATEMENT,
    TRX_WITH_QUERY_STATEMENT,
    Sessions,
    parse_sessions,
    sessions_statement,
)
from lagscope.collectors.cause_readings.table_keys import (
    hidden_tables,
    parse_table_dictionary,
    parse_table_keys,
    table_dictionary_statements,
    table_index_records,
    table_keys_statements,
    unchecked_tables,
)
from lagscope.collectors.cause_readings.transactions import (
    applier_transaction_records,
    parse_transactions,
    transactions_statements,
)
from lagscope.collectors.cause_readings.trigger import BUSY_S, behind, busy_long, channel_behind

__all__ = [
    "BACKUP_HOLDERS_MAX",
    "BUSY_S",
    "LOCKS_MAX",
    "LOCK_SESSIONS_MAX",
    "LOCK_WAITS_MAX",
    "MDL_KINDS",
    "MDL_LOCKS_MAX",
    "MDL_PLUGIN_PROBE_SQL",
    "RELAY_CHANNELS_MAX",
    "RELAY_EVENTS_LIMIT",
    "SESSIONS_MAX",
    "SESSION_LOCK",
    "TRX_MAX",
    "TRX_STATEMENT",
    "TRX_WITH_QUERY_STATEMENT",
    "CauseMemory",
    "EvidenceParts",
    "Record",
    "Sessions",
    "applier_transaction_records",
    "backup_holder_records",
    "backup_holders_statements",
    "behind",
    "blocking_trx_records",
    "busy_long",
    "channel_behind",
    "hidden_tables",
    "lock_session_records",
    "lock_sessions_statements",
    "mdl_blockers",
    "mdl_blockers_statements",
    "mdl_candidate_records",
    "mdl_holder_records",
    "mdl_probe_statement",
    "mdl_problem",
    "parse_backup_holders",
    "parse_lock_sessions",
    "parse_mdl_blockers",
    "parse_mdl_probe",
    "parse_receive",
    "parse_relay_events",
    "parse_row_blockers",
    "parse_sessions",
    "parse_table_dictionary",
    "parse_table_keys",
    "parse_transactions",
    "receive_statement",
    "relay_events_statement",
    "relay_positions",
    "row_blocker_records",
    "row_blockers",
    "row_blockers_statements",
    "sessions_statement",
    "sql_string",
    "table_dictionary_statements",
    "table_index_records",
    "table_keys_statements",
    "transactions_statements",
    "unchecked_tables",
    "with_trx_started",
]
