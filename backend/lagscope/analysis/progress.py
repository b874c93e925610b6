"""A transaction counter from GTID text, so apply and source rates are differences over time.

MySQL: the number of transactions in the GTID set. MariaDB: the sum of ``seq_no`` over the
position's domains; ``seq_no`` grows by one per transaction within a domain (whichever server
wrote it), so the sum grows by one per transaction across all domains. Both are only compared
with an earlier value of the same kind on the same server (docs/replication.md, "GTID formats").
"""

from __future__ import annotations

from typing import Literal

from lagscope.collectors.gtid import Gtids, GtidSet, parse_gtids


def gtid_progress(product: Literal["mysql", "mariadb"], text: str) -> int:
    """Transactions executed so far per ``text``; invalid text raises :class:`ValueError`."""
    return progress_of(parse_gtids(product, text))


def progress_of(gtids: Gtids) -> int:
    """:func:`gtid_progress` of an already parsed text."""
    if isinstance(gtids, GtidSet):
        return gtids.count()
    return sum(gtid.seq_no for gtid in gtids.gtids)
