"""How many transactions a replica is behind, counted from GTIDs the same way for both products:
not yet received, received but not applied, and (MariaDB) per domain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from lagscope.collectors.gtid.mariadb import Gtid, GtidPos
from lagscope.collectors.gtid.mysql import GtidSet


@dataclass(frozen=True, slots=True)
class DomainCounts:
    """The four :class:`GtidCounts` numbers for one MariaDB domain."""

    trx_behind: int
    not_received: int
    received_not_applied: int
    errant: int


@dataclass(frozen=True, slots=True)
class GtidCounts:
    """How far a replica is from its source, in transactions, for either product."""

    trx_behind: int  # on the source and not executed on the replica
    not_received: int  # on the source, neither retrieved nor executed (network side)
    received_not_applied: int  # retrieved but not executed (apply side)
    errant: int  # executed on the replica but never on the source
    per_domain: Mapping[int, DomainCounts] | None  # MariaDB only, by domain_id; None for MySQL
    exact: bool  # False when the figures are an estimate (see mariadb_counts)


def mysql_counts(source_executed: GtidSet, retrieved: GtidSet, executed: GtidSet) -> GtidCounts:
    """Transactions behind on MySQL: plain set arithmetic, so always exact.

    ``retrieved`` may end with one partially received transaction (M80-SRS); it is counted as
    received-not-applied all the same, because it is the apply side's next job either way.
    """
    return GtidCounts(
        trx_behind=(source_executed - executed).count(),
        not_received=(source_executed - (retrieved | executed)).count(),
        received_not_applied=(retrieved - executed).count(),
        # Errant: the reverse subtraction; local writes on the replica are not lag.
        errant=(executed - source_executed).count(),
        per_domain=None,
        exact=True,
    )


def _domain_counts(src: Gtid | None, io: Gtid | None, slave: Gtid | None) -> DomainCounts:
    s, i, r = (0 if g is None else g.seq_no for g in (src, io, slave))
    # Positions, not sets: seq_no is one increasing counter per domain, so a difference of
    # seq_nos is a number of transactions (exact only under gtid_strict_mode).
    received = max(i, r)  # Gtid_IO_Pos can lag slave_pos after a restart; applied implies received
    return DomainCounts(
        trx_behind=max(0, s - r),
        not_received=max(0, s - received),
        received_not_applied=max(0, i - r),
        # The replica ahead of the source in a domain: someone else wrote there (a local write,
        # or a former source), or the domain is missing on the source altogether (s == 0).
        errant=max(0, r - s),
    )


def mariadb_counts(
    source_binlog_pos: GtidPos, io_pos: GtidPos, slave_pos: GtidPos, strict_mode: bool = True
) -> GtidCounts:
    """Transactions behind on MariaDB: per-domain seq_no differences, summed over domains.

    Domains are independent streams applied out of order (KB-PAR), so each is counted alone.
    ``exact`` is False when ``strict_mode`` is off (seq_no may skip or run backwards), or when
    any domain on the replica is ahead of the source or absent from it: seq_nos from different
    servers, or a source whose position went backwards, do not subtract into a count.
    """
    per_domain: dict[int, DomainCounts] = {}
    exact = strict_mode
    domains = set(source_binlog_pos.domains()) | set(io_pos.domains()) | set(slave_pos.domains())
    for domain in sorted(domains):
        src, slave = source_binlog_pos.get(domain), slave_pos.get(domain)
        per_domain[domain] = _domain_counts(src, io_pos.get(domain), slave)
        if slave is not None and (src is None or slave.seq_no > src.seq_no):
            exact = False
    return GtidCounts(
        trx_behind=sum(c.trx_behind for c in per_domain.values()),
        not_received=sum(c.not_received for c in per_domain.values()),
        received_not_applied=sum(c.received_not_applied for c in per_domain.values()),
        errant=sum(c.errant for c in per_domain.values()),
        per_domain=MappingProxyType(per_domain),
        exact=exact,
    )
