"""The interval lists GTID sets are made of (sorted, disjoint, non-adjacent), their intersection
and difference, and the checks a parsed interval or source id must pass; errors quote the
offending text, shortened so a huge set still reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
