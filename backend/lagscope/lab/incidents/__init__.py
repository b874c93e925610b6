"""Make each cause of replication lag happen on a running lab, and undo it.

Every incident is a context manager taking the :class:`~lagscope.lab.topology.Lab` first and
keyword options after; entering returns an :class:`Incident` once the servers SHOW the cause
(polled, with a time limit — never a fixed sleep), saying what a test or the demo must find: the
replica it shows on, the table used, the blocking session's ``CONNECTION_ID()``. Leaving undoes it
(ends the session, restores the setting, stops the load), waits until every replica has caught up
and drops the incident's table. Everything stays on the lab's loopback servers.

Tables live in the ``lab_incidents`` database. Big tables are filled on every server at once with
``sql_log_bin=0`` from MariaDB's sequence engine, identical everywhere: the fill is setup, not part
of the incident, and replicating a million-row fill would itself be a large transaction.

What is real here, per cause (docs/causes.md):

* ``large_transaction`` — one ``UPDATE`` of every row of a big table on the source; the replicas
  apply it for 10 s or more (``INNODB_TRX.trx_rows_modified`` climbs).
* ``long_alter`` — ``ALTER TABLE … ALGORITHM=COPY`` on a big table; replicated, applied serially
  for about 6 s.
* ``metadata_lock`` — a replica session in an open transaction that read the table; the source
  alters it; the applier waits for the metadata lock.
* ``row_lock`` — a replica session holding ``SELECT … FOR UPDATE`` locks; the source updates those
  rows; the applier's transaction is in ``LOCK WAIT``.
* ``no_primary_key`` — a bulk ``UPDATE`` of a keyless table under ROW format: each row event
  scans the table on the replica (``find_row()``).
* ``serial_apply`` — many concurrent committers on the source with ``sync_binlog=1`` (so commits
  group), a serial applier on the replica (``slave_parallel_threads=0``).
* ``relay_log_durability`` — ``sync_relay_log=1``/``sync_master_info=1`` on the replicas under a
  write load: the IO threads fsync every event; near and far fall behind on receiving alike.
* ``durable_apply`` — a cheap-committing source, a serial replica fsyncing each applied
  transaction (``innodb_flush_log_at_trx_commit=1``, ``sync_binlog=1``).
* ``delayed`` — ``CHANGE MASTER TO MASTER_DELAY=N``.
* ``stopped`` / ``broken`` — the SQL thread stopped by hand, or by a duplicate-key error on a
  row written on the replica alone.
* ``network_bound`` — the far replica's proxy limited to a bandwidth below the source's binlog
  rate; the near replica keeps up.
* ``clock_offset`` — a replica restarted under libfaketime (``FAKETIME=+Ns``): its whole clock
  (``NOW()``, ``UNIX_TIMESTAMP()``, the binlog's event times) is shifted. ``SET TIMESTAMP`` would
  only shift one session's ``NOW()``, which no monitor would ever see. Needs Debian's
  ``faketime`` package (``make system-deps``); without it the incident refuses, and clock skew is
  left to unit tests with a fake clock.

The big tables (large transaction, long ALTER, keyless update) are sized to this machine's
speed: a first slice is filled and timed, and the row count follows. With fixed sizes a quiet
box applied the million-row UPDATE in 2 s, under the 5 s after which a transaction is "large",
so whether the cause showed depended on the box.

The package: ``common`` (the :class:`Incident`, the lab queries and waits every incident uses),
``tables`` (the incident tables, sized and filled), ``load`` (the source's write load), one module
per family of causes (``big_tables``, ``locks``, ``throughput``, ``applier_stops``, ``network``,
``clock``) and ``catalogue`` (the incidents by name, for the CLI and the demo). Every name is
re-exported here, as the lab's CLI, the demo and the tests use them.
"""

from __future__ import annotations

from lagscope.lab.incidents.applier_stops import broken, delayed, stopped
from lagscope.lab.incidents.big_tables import large_transaction, long_alter, no_primary_key
from lagscope.lab.incidents.catalogue import INCIDENTS, IncidentMaker, incident
from lagscope.lab.incidents.clock import clock_offset, measure_clock_offset
from lagscope.lab.incidents.common import (
    ALTER_COST,
    LARGE_TRX_LASTING_S,
    LONG_ALTER_LASTING_S,
    MAX_ROWS,
    NO_KEY_LASTING_S,
    SCHEMA,
    SYSTEM_USER,
    Incident,
    T,
    _seq,
    _sql,
    _state_shown,
    applier_threads,
    applier_transactions,
    not_applied,
    not_received,
    query,
    wait_for,
)
from lagscope.lab.incidents.load import _Load
from lagscope.lab.incidents.locks import metadata_lock, row_lock
from lagscope.lab.incidents.network import network_bound
from lagscope.lab.incidents.throughput import (
    binlog_commits,
    durable_apply,
    relay_log_durability,
    serial_apply,
)

__all__ = [
    "ALTER_COST",
    "INCIDENTS",
    "LARGE_TRX_LASTING_S",
    "LONG_ALTER_LASTING_S",
    "MAX_ROWS",
    "NO_KEY_LASTING_S",
    "SCHEMA",
    "SYSTEM_USER",
    "Incident",
    "IncidentMaker",
    "T",
    "_Load",
    "_seq",
    "_sql",
    "_state_shown",
    "applier_threads",
    "applier_transactions",
    "binlog_commits",
    "broken",
    "clock_offset",
    "delayed",
    "durable_apply",
    "incident",
    "large_transaction",
    "long_alter",
    "measure_clock_offset",
    "metadata_lock",
    "network_bound",
    "no_primary_key",
    "not_applied",
    "not_received",
    "query",
    "relay_log_durability",
    "row_lock",
    "serial_apply",
    "stopped",
    "wait_for",
]
