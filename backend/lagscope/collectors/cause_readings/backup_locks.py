"""Backup-lock blockers (MariaDB with the ``METADATA_LOCK_INFO`` plugin): the client sessions
holding the backup lock in a mode that blocks an applier (FLUSH TABLES WITH READ LOCK, a BACKUP
STAGE) while a replication thread waits for it. MySQL's ``metadata_locks`` reading covers this
lock already; without the plugin the lock sessions are the candidates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lagscope.collectors.cause_readings.common import (
    BACKUP_HOLDERS_MAX,
    CauseMemory,
    Record,
    _id,
    _part,
)
from lagscope.collectors.cause_readings.metadata_locks import (
    _by_waiter,
    _distinct,
    _holder,
    mdl_blockers,
)
from lagscope.collectors.cause_readings.sessions import (
    TRX_STATEMENT,
    Sessions,
    _trx_of,
)
from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import BlockingSession

# MariaDB with the plugin: the backup lock's holders. FLUSH TABLES WITH READ LOCK holds it in
# MDL_BACKUP_FTWRL1/2, a BACKUP STAGE in MDL_BACKUP_START … WAIT_COMMIT (seen on 10.11 on the lab);
# the modes every statement takes (DML, DDL, COMMIT…) never block an applier, so they are left out.
_BACKUP_LOCK_WAIT_STATE = "Waiting for backup lock"
_BACKUP_HOLDERS_MARIADB_SQL = (
    "SELECT THREAD_ID AS holder_thread_id FROM information_schema.METADATA_LOCK_INFO "  # noqa: S608 - constant fragments
    "WHERE LOCK_TYPE = 'Backup lock' AND LOCK_MODE NOT IN ('MDL_BACKUP_DML', "
    "'MDL_BACKUP_TRANS_DML', 'MDL_BACKUP_SYS_DML', 'MDL_BACKUP_DDL', 'MDL_BACKUP_ALTER_COPY', "
    f"'MDL_BACKUP_COMMIT') LIMIT {BACKUP_HOLDERS_MAX}"
)


def backup_holders_statements(dialect: Dialect, memory: CauseMemory) -> tuple[str, ...]:
    """MariaDB with METADATA_LOCK_INFO only (MySQL's metadata_locks reading covers the backup
    lock already; without the plugin the lock sessions are the candidates)."""
    if dialect.product != "mariadb" or not memory.mdl_plugin:
        return ()
    return (_BACKUP_HOLDERS_MARIADB_SQL, TRX_STATEMENT)


def backup_holder_records(
    holders: Iterable[Mapping[str, Any]],
    trx: Iterable[Mapping[str, Any]],
    sessions: Sessions,
) -> list[Record]:
    """MariaDB with METADATA_LOCK_INFO: for each replication thread waiting for the backup
    lock, the client sessions holding it in a mode that blocks (FTWRL, a BACKUP STAGE)."""
    trx_of = _trx_of(trx)
    holder_ids = [_id(h.get("holder_thread_id")) for h in holders]
    found: list[Record] = []
    for waiter in sessions.waiting(_BACKUP_LOCK_WAIT_STATE):
        waiter_id = _id(waiter.get("id"))
        for thread_id in holder_ids:
            session = sessions.client(thread_id)
            if thread_id == waiter_id or session is None:
                continue
            record = _holder(thread_id, waiter_id, session, trx_of)
            record.update(object_name="", certain=1, object_type="BACKUP LOCK")
            found.append(record)
    return _by_waiter(_distinct(found))


def parse_backup_holders(
    parts: Sequence[ResultSet], sessions: Sessions | None
) -> tuple[BlockingSession, ...]:
    if sessions is None:
        return ()
    holders = _part(parts, "holder_thread_id") or []
    trx = _part(parts, "trx_id") or []
    return mdl_blockers(backup_holder_records(holders, trx, sessions))
