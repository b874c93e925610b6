"""MySQL GTID sets (``uuid[:tag]:1-5:7``, as ``@@global.gtid_executed`` and the replica status
write them): parsed, normalised, compared and counted.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from lagscope.collectors.gtid.intervals import (
    _INTERVAL_RE,
    _TAG_RE,
    _UUID_RE,
    MAX_GNO,
    Interval,
    _check_interval,
    _check_source_id,
    _intersect,
    _normalise,
    _quote,
    _subtract,
)


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
