"""GTID arithmetic for both flavors: MySQL GTID sets, MariaDB GTID positions, and lag counts.

Pure package: no SQL runs here and no driver is imported. The collectors read the strings
(MySQL ``@@global.gtid_executed``, ``Retrieved_Gtid_Set``, ``Executed_Gtid_Set``; MariaDB
``@@gtid_binlog_pos``, ``Gtid_IO_Pos``, ``@@gtid_slave_pos``) and hand them to
:func:`gtid_counts`, which answers "how many transactions behind" the same way for both products
(docs/replication.md, "GTID formats" and "Counting transactions behind").

Parse errors raise :class:`ValueError` quoting the offending part; callers translate it into
their own error type.

The package: ``intervals`` (sorted, disjoint interval lists and the parse checks both flavors
share), ``mysql`` (:class:`GtidSet`), ``mariadb`` (:class:`Gtid`, :class:`GtidPos`), ``counting``
(transactions behind, per flavor) and ``texts`` (GTID text parsed once per snapshot, and
:func:`gtid_counts`). Every public name is re-exported here.
"""

from __future__ import annotations

from lagscope.collectors.gtid.counting import DomainCounts, GtidCounts, mariadb_counts, mysql_counts
from lagscope.collectors.gtid.intervals import MAX_GNO, Interval
from lagscope.collectors.gtid.mariadb import Gtid, GtidPos
from lagscope.collectors.gtid.mysql import GtidSet
from lagscope.collectors.gtid.texts import (
    GtidKind,
    Gtids,
    GtidTexts,
    count_gtids,
    gtid_counts,
    parse_gtids,
)

__all__ = [
    "MAX_GNO",
    "DomainCounts",
    "Gtid",
    "GtidCounts",
    "GtidKind",
    "GtidPos",
    "GtidSet",
    "GtidTexts",
    "Gtids",
    "Interval",
    "count_gtids",
    "gtid_counts",
    "mariadb_counts",
    "mysql_counts",
    "parse_gtids",
]
