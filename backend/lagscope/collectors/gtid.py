"""GTID arithmetic for both flavors: MySQL GTID sets, MariaDB GTID positions, and lag counts.

Pure module: no SQL runs here and no driver is imported. The collectors read the strings
(MySQL ``@@global.gtid_executed``, ``Retrieved_Gtid_Set``, ``Executed_Gtid_Set``; MariaDB
``@@gtid_binlog_pos``, ``Gtid_IO_Pos``, ``@@gtid_slave_pos``) and hand them to
:func:`gtid_counts`, which answers "how many transactions behind" the same way for both products
(docs/replication.md, "GTID formats" and "Counting transactions behind").

Parse errors raise :class:`ValueError` quoting the offending part; callers translate it into
their own error type.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Interval = tuple[int, int]
"""Inclusive ``(first, last)`` transaction numbers, ``1 <= first <= last <= MAX_GNO``."""

MAX_GNO = 2**63 - 1  # MySQL stores sequence numbers as signed 64-bit
_MAX_U32 = 2**32 - 1  # MariaDB domain_id and server_id are u32
_MAX_U64 = 2**64 - 1  # MariaDB seq_no is u64

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# Tag grammar from MySQL's Tag::from_cstring: a letter or '_' first, then up to 31 more of
# letters, digits, '_'. ASCII classes on purpose: \w would admit Unicode letters.
_TAG = r"[A-Za-z_][A-Za-z0-9_]{0,31}"
_UUID_RE = re.compile(_UUID)
_TAG_RE = re.compile(_TAG)
_SOURCE_ID_RE = re.compile(f"{_UUID}(?::{_TAG})?")
# Whitespace is allowed around separators, as MySQL's parser skips it between tokens; it is not
# allowed inside a number or a UUID, which the server never prints.
_INTERVAL_RE = re.compile(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?")
_NUMBER_RE = re.compile(r"\s*([0-9]+)\s*")


def _quote(text: str, limit: int = 80) -> str:
    """repr() of ``text``, shortened: error messages must stay readable for a huge set."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


# --- interval lists (sorted, disjoint, non-adjacent) -------------------------------------------


def _normalise(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Sort and merge overlapping *and adjacent* intervals, so equal sets have one form."""
    merged: list[Interval] = []
    for first, last in sorted(intervals):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return tuple(merged)


def _intersect(left: tuple[Interval, ...], right: tuple[Interval, ...]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        first = max(left[i][0], right[j][0])
        last = min(left[i][1], right[j][1])
        if first <= last:
            out.append((first, last))
        # Advance whichever ends first: it cannot overlap anything further in the other list.
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def _subtract(left: tuple[Interval, ...], right: tuple[Interval, ...]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    j = 0
    for first, last in left:
        start = first
        # Skip removals wholly before this interval; both lists are sorted, so never revisit.
        while j < len(right) and right[j][1] < start:
            j += 1
        k = j
        while k < len(right) and right[k][0] <= last and start <= last:
            if right[k][0] > start:
                out.append((start, right[k][0] - 1))
            start = max(start, right[k][1] + 1)
            k += 1
        if start <= last:
            out.append((start, last))
    return tuple(out)


def _check_interval(first: int, last: int) -> Interval:
    for number in (first, last):
        if not 1 <= number <= MAX_GNO:
            raise ValueError(f"GTID number {_quote(str(number))} is outside 1..{MAX_GNO}")
    if last < first:
        raise ValueError(f"GTID interval {_quote(f'{first}-{last}')} ends before it starts")
    return (first, last)


def _check_source_id(source_id: str) -> str:
    """Lower-case ``uuid`` or ``uuid:tag``: both parts compare case-insensitively in MySQL."""
    if not isinstance(source_id, str) or _SOURCE_ID_RE.fullmatch(source_id) is None:
        raise ValueError(f"bad GTID source id {_quote(str(source_id))}: want uuid or uuid:tag")
    return source_id.lower()


# --- MySQL GTID sets -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GtidSet:
    """A MySQL GTID set: source id (``uuid`` or ``uuid:tag``, lower case) → intervals.

    ``entries`` is kept canonical (source ids sorted, only non-empty, intervals merged), so the
    generated ``==`` and ``hash`` compare by value. Build from text with :meth:`parse` or from
    a mapping with :meth:`from_mapping`; the constructor also normalises whatever it is given.
    """

    entries: tuple[tuple[str, tuple[Interval, ...]], ...] = ()

    def __post_init__(self) -> None:
        merged: dict[str, list[Interval]] = {}
        for source_id, intervals in self.entries:
            checked = [_check_interval(int(a), int(b)) for a, b in intervals]
            merged.setdefault(_check_source_id(source_id), []).extend(checked)
        canonical = tuple((sid, _normalise(ivs)) for sid, ivs in sorted(merged.items()) if ivs)
        object.__setattr__(self, "entries", canonical)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Iterable[Interval]]) -> GtidSet:
        return cls(tuple((sid, tuple(ivs)) for sid, ivs in mapping.items()))

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """Parse a GTID set as servers print it (see :func:`_parse_mysql_item` for one item).

        Empty items are skipped, as MySQL's own parser does ("we allow empty SID:GNO
        specifications"), so ``''``, ``','`` and a trailing comma all parse.
        """
        acc: dict[str, list[Interval]] = {}
        for item in text.split(","):
            if item.strip():
                _parse_mysql_item(item, acc)
        return cls(tuple((sid, tuple(ivs)) for sid, ivs in acc.items()))

    def as_dict(self) -> dict[str, tuple[Interval, ...]]:
        return dict(self.entries)

    def source_ids(self) -> tuple[str, ...]:
        return tuple(sid for sid, _ in self.entries)

    def intervals(self, source_id: str) -> tuple[Interval, ...]:
        """Intervals of one source id; ``()`` when absent."""
        wanted = source_id.lower()
        return next((ivs for sid, ivs in self.entries if sid == wanted), ())

    def count(self) -> int:
        """Number of transactions; a Python int because a set may hold more than 2^63."""
        return sum(last - first + 1 for _, ivs in self.entries for first, last in ivs)

    def union(self, other: GtidSet) -> GtidSet:
        return GtidSet(self.entries + other.entries)

    def intersection(self, other: GtidSet) -> GtidSet:
        theirs = other.as_dict()
        return GtidSet(
            tuple((sid, _intersect(ivs, theirs.get(sid, ()))) for sid, ivs in self.entries)
        )

    def difference(self, other: GtidSet) -> GtidSet:
        theirs = other.as_dict()
        return GtidSet(
            tuple((sid, _subtract(ivs, theirs.get(sid, ()))) for sid, ivs in self.entries)
        )

    def is_subset(self, other: GtidSet) -> bool:
        return not self.difference(other)

    # Typed for mypy's sake; the runtime guard still gives untyped callers a TypeError.
    def __or__(self, other: GtidSet) -> GtidSet:
        return self.union(other) if isinstance(other, GtidSet) else NotImplemented

    def __and__(self, other: GtidSet) -> GtidSet:
        return self.intersection(other) if isinstance(other, GtidSet) else NotImplemented

    def __sub__(self, other: GtidSet) -> GtidSet:
        return self.difference(other) if isinstance(other, GtidSet) else NotImplemented

    def __contains__(self, gtid: object) -> bool:
        """``(source_id, n) in s``; anything else is simply not a member."""
        if not (isinstance(gtid, tuple) and len(gtid) == 2):
            return False
        source_id, number = gtid
        if not isinstance(source_id, str) or not isinstance(number, int):
            return False
        ivs = self.intervals(source_id)
        # Index of the last interval starting at or before ``number``.
        pos = bisect_right(ivs, (number, MAX_GNO + 1)) - 1
        return pos >= 0 and ivs[pos][0] <= number <= ivs[pos][1]

    def __bool__(self) -> bool:
        return bool(self.entries)

    def __iter__(self) -> Iterator[tuple[str, tuple[Interval, ...]]]:
        return iter(self.entries)

    def __str__(self) -> str:
        """MySQL's own text form: one comma item per UUID, its tags after its untagged ranges.

        Source ids sort untagged first because ``uuid`` is a prefix of ``uuid:tag``, which is
        exactly the server's order (``Gtid_set::to_string``), e.g. ``u:1-5:domain_1:1-3``.
        """
        items: list[str] = []
        last_uuid = None
        for sid, ivs in self.entries:
            uuid, _, tag = sid.partition(":")
            ranges = ":".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ivs)
            part = f"{tag}:{ranges}" if tag else ranges
            if uuid == last_uuid:
                items[-1] += f":{part}"
            else:
                items.append(f"{uuid}:{part}")
            last_uuid = uuid
        return ",".join(items)


def _parse_mysql_item(item: str, acc: dict[str, list[Interval]]) -> None:
    """Parse ``uuid[:tag]:ranges[:tag:ranges…]`` into ``acc``.

    As in MySQL, a tag applies to the ranges after it until the next tag, so
    ``u:1-5:domain_1:1-3`` is untagged 1-5 plus ``u:domain_1`` 1-3. A UUID or tag with no ranges
    after it adds nothing (MySQL accepts that too).
    """
    uuid_text, *segments = item.split(":")
    uuid = uuid_text.strip()
    if _UUID_RE.fullmatch(uuid) is None:
        raise ValueError(f"bad UUID {_quote(uuid)} in GTID set item {_quote(item.strip())}")
    source_id = uuid  # lower-cased with the tag by the GtidSet constructor
    for segment in segments:
        if _TAG_RE.fullmatch(segment.strip()):
            source_id = f"{uuid}:{segment.strip()}"
            continue
        match = _INTERVAL_RE.fullmatch(segment)
        if match is None:
            raise ValueError(
                f"bad GTID interval or tag {_quote(segment.strip())} in {_quote(item.strip())}"
            )
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        try:
            interval = _check_interval(first, last)
        except ValueError as exc:
            raise ValueError(f"{exc} in {_quote(item.strip())}") from exc
        acc.setdefault(source_id, []).append(interval)


# --- MariaDB GTID positions ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gtid:
    """One MariaDB GTID ``domain-server-seq`` (u32-u32-u64)."""

    domain_id: int
    server_id: int
    seq_no: int

    def __post_init__(self) -> None:
        for name, value, top in (
            ("domain_id", self.domain_id, _MAX_U32),
            ("server_id", self.server_id, _MAX_U32),
            ("seq_no", self.seq_no, _MAX_U64),
        ):
            if not 0 <= value <= top:
                raise ValueError(f"MariaDB GTID {name} {_quote(str(value))} is outside 0..{top}")

    @classmethod
    def parse(cls, text: str) -> Gtid:
        parts = text.split("-")
        if len(parts) != 3:
            raise ValueError(f"bad MariaDB GTID {_quote(text.strip())}: want domain-server-seq")
        numbers: list[int] = []
        for name, part in zip(("domain_id", "server_id", "seq_no"), parts, strict=True):
            if _NUMBER_RE.fullmatch(part) is None:
                raise ValueError(
                    f"bad MariaDB GTID {_quote(text.strip())}: {name} {_quote(part.strip())} "
                    "is not a number"
                )
            numbers.append(int(part))
        return cls(*numbers)

    def __str__(self) -> str:
        return f"{self.domain_id}-{self.server_id}-{self.seq_no}"


@dataclass(frozen=True, slots=True)
class GtidPos:
    """A MariaDB GTID position: at most one GTID per domain, kept sorted by domain_id."""

    gtids: tuple[Gtid, ...] = ()

    def __post_init__(self) -> None:
        by_domain: dict[int, Gtid] = {}
        for gtid in self.gtids:
            seen = by_domain.setdefault(gtid.domain_id, gtid)
            # Two different GTIDs for one domain make the position ambiguous; a repeat of the
            # same one is harmless (e.g. a position pasted twice), so accept it.
            if seen != gtid:
                raise ValueError(
                    f"MariaDB GTID position has two GTIDs for domain {gtid.domain_id}: "
                    f"{_quote(str(seen))} and {_quote(str(gtid))}"
                )
        object.__setattr__(self, "gtids", tuple(by_domain[d] for d in sorted(by_domain)))

    @classmethod
    def parse(cls, text: str) -> GtidPos:
        """Parse ``''``, ``0-1-2042`` or ``0-1-2042,1-20-500``; empty items are skipped."""
        return cls(tuple(Gtid.parse(item) for item in text.split(",") if item.strip()))

    def get(self, domain_id: int) -> Gtid | None:
        return next((g for g in self.gtids if g.domain_id == domain_id), None)

    def seq(self, domain_id: int) -> int:
        """seq_no in ``domain_id``; 0 when absent, i.e. nothing from that domain yet."""
        gtid = self.get(domain_id)
        return 0 if gtid is None else gtid.seq_no

    def domains(self) -> tuple[int, ...]:
        return tuple(g.domain_id for g in self.gtids)

    def __bool__(self) -> bool:
        return bool(self.gtids)

    def __str__(self) -> str:
        return ",".join(map(str, self.gtids))


# --- counting ------------------------------------------------------------------------------------


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


GtidKind = Literal["mysql", "mariadb"]
Gtids = GtidSet | GtidPos
"""Parsed GTID text: a MySQL set or a MariaDB position."""


def parse_gtids(kind: GtidKind, text: str) -> Gtids:
    """``text`` as ``kind`` writes it; :class:`ValueError` when it does not parse."""
    if kind == "mysql":
        return GtidSet.parse(text)
    if kind == "mariadb":
        return GtidPos.parse(text)
    raise ValueError(f"unknown product {_quote(str(kind))}: want 'mysql' or 'mariadb'")


class GtidTexts:
    """GTID texts parsed once each, by (kind, text); a failure is remembered too.

    One per snapshot (``InstanceSnapshot.parsed``): a tick reads a server's sets for its rate,
    its counts and its timeline, and a large MySQL set costs milliseconds to parse. Parsed
    values are immutable, so sharing them is safe."""

    __slots__ = ("_parsed",)

    def __init__(self) -> None:
        self._parsed: dict[tuple[str, str], Gtids | ValueError] = {}

    def parse(self, kind: GtidKind, text: str) -> Gtids:
        found = self._parsed.get((kind, text))
        if found is None:
            try:
                found = parse_gtids(kind, text)
            except ValueError as exc:
                found = exc
            self._parsed[kind, text] = found
        if isinstance(found, ValueError):
            raise ValueError(*found.args)
        return found

    def gtid_set(self, text: str) -> GtidSet:
        parsed = self.parse("mysql", text)
        assert isinstance(parsed, GtidSet)
        return parsed

    def gtid_pos(self, text: str) -> GtidPos:
        parsed = self.parse("mariadb", text)
        assert isinstance(parsed, GtidPos)
        return parsed


def count_gtids(
    source_executed: Gtids, retrieved: Gtids, executed: Gtids, strict_mode: bool = True
) -> GtidCounts:
    """:func:`gtid_counts` over parsed texts; :class:`ValueError` when their kinds differ."""
    if (
        isinstance(source_executed, GtidSet)
        and isinstance(retrieved, GtidSet)
        and isinstance(executed, GtidSet)
    ):
        return mysql_counts(source_executed, retrieved, executed)
    if (
        isinstance(source_executed, GtidPos)
        and isinstance(retrieved, GtidPos)
        and isinstance(executed, GtidPos)
    ):
        return mariadb_counts(source_executed, retrieved, executed, strict_mode)
    raise ValueError("GTID texts of different products cannot be counted together")


def gtid_counts(
    product: Literal["mysql", "mariadb"],
    source_executed: str,
    retrieved: str,
    executed: str,
    strict_mode: bool = True,
) -> GtidCounts:
    """Parse the three server strings for ``product`` and count.

    MySQL: source ``@@gtid_executed``, ``Retrieved_Gtid_Set``, ``Executed_Gtid_Set``.
    MariaDB: source ``@@gtid_binlog_pos``, ``Gtid_IO_Pos``, ``@@gtid_slave_pos``;
    ``strict_mode`` is the replica's ``@@gtid_strict_mode`` (ignored for MySQL).
    """
    if product == "mysql":
        return mysql_counts(
            GtidSet.parse(source_executed), GtidSet.parse(retrieved), GtidSet.parse(executed)
        )
    if product == "mariadb":
        return mariadb_counts(
            GtidPos.parse(source_executed),
            GtidPos.parse(retrieved),
            GtidPos.parse(executed),
            strict_mode,
        )
    raise ValueError(f"unknown product {_quote(str(product))}: want 'mysql' or 'mariadb'")
