"""The instance's own binary log coordinates.

SQL (by dialect): ``SHOW MASTER STATUS`` (MariaDB, MySQL < 8.2) or ``SHOW BINARY LOG STATUS``
(MySQL ≥ 8.2; the only form in 8.4). Columns ``File``, ``Position``, ``Binlog_Do_DB``,
``Binlog_Ignore_DB`` and, on MySQL, ``Executed_Gtid_Set``. Zero rows: binary logging is off.
"""

from __future__ import annotations

from lagscope.collectors.dialect import Dialect
from lagscope.collectors.executor import ResultSet
from lagscope.collectors.snapshot import SourceStatus
from lagscope.collectors.values import as_int, as_text, no_space


def statement(dialect: Dialect) -> str:
    return dialect.source_status_sql


def parse(dialect: Dialect, result: ResultSet) -> SourceStatus | None:
    records = result.records()
    if not records:
        return None
    row = records[0]
    gtids = row.get("executed_gtid_set")
    return SourceStatus(
        binlog_file=as_text(row.get("file")),
        binlog_position=as_int(row.get("position")) or 0,
        gtid_executed=no_space(gtids)
        if dialect.gtid_kind == "mysql" and gtids is not None
        else None,
    )
