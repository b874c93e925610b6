"""Applier workers: one reading turned into per-channel counts and masks, and masks into a
heatmap of busy share per worker and time bucket.

A worker is *busy* when it holds a transaction at the instant of the read, and *active* when it
is busy or did some work since the previous read: idle for less than the time between the two
reads (MySQL 8.0+: since its last transaction ended; MariaDB: in its waiting state), or its last
applied transaction changed (the only sign MySQL 5.7 gives). Over many reads the busy share is an
unbiased estimate of the time a worker spends holding transactions; the active share answers
"is this worker used at all?" even when transactions are far shorter than the poll interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lagscope.collectors.snapshot import ApplierWorker


@dataclass(frozen=True, slots=True)
class ChannelWorkers:
    """One channel's workers at one read, as stored."""

    channel: str
    workers: int
    busy: int | None
    busy_mask: bytes | None
    active: int
    active_mask: bytes
    errors: int
    # Threads waiting to read the relay log while the receiver writes (and fsyncs) it:
    # MariaDB's serial SQL thread in RELAY_READ_STATE. The durability prediction's relay-log
    # coupling (analysis/durability.py); 0 where the state is not shown (MySQL's P_S workers).
    relay_waiting: int = 0


# sql/slave.cc's state while the SQL thread takes the relay log's lock to read the next event:
# with sync_relay_log=1 it waits there for the receiver's fsync of each event (measured on the
# lab: 41 % of the serial applier's time at sync_relay_log=1, 3.5 % once relaxed).
RELAY_READ_STATE = "Reading event from the relay log"


def to_mask(flags: Sequence[bool]) -> bytes:
    """Bit ``i`` (byte ``i // 8``, bit ``i % 8``) set when ``flags[i]``."""
    mask = bytearray((len(flags) + 7) // 8)
    for i, flag in enumerate(flags):
        if flag:
            mask[i // 8] |= 1 << (i % 8)
    return bytes(mask)


def from_mask(mask: bytes, count: int) -> list[bool]:
    return [i // 8 < len(mask) and bool(mask[i // 8] >> (i % 8) & 1) for i in range(count)]


def _active(worker: ApplierWorker, before: str | None, interval_s: float | None) -> bool:
    if worker.busy:
        return True
    if interval_s is not None and worker.idle_s is not None and worker.idle_s < interval_s:
        return True
    applied = worker.last_applied_trx
    return before is not None and bool(applied) and applied != before


def summarize(
    workers: Iterable[ApplierWorker],
    previous_trx: Mapping[tuple[str, int], str],
    interval_s: float | None,
) -> list[ChannelWorkers]:
    """Per channel (by name), workers in worker-id order. ``previous_trx``: each worker's last
    applied transaction at the previous read; ``interval_s``: the time since that read."""
    by_channel: dict[str, list[ApplierWorker]] = {}
    for worker in workers:
        by_channel.setdefault(worker.channel, []).append(worker)
    rows = []
    for channel in sorted(by_channel):
        ws = sorted(by_channel[channel], key=lambda w: w.worker_id)
        known = all(w.busy is not None for w in ws)
        busy = [bool(w.busy) for w in ws]
        active = [_active(w, previous_trx.get((channel, w.worker_id)), interval_s) for w in ws]
        rows.append(
            ChannelWorkers(
                channel=channel,
                workers=len(ws),
                busy=sum(busy) if known else None,
                busy_mask=to_mask(busy) if known else None,
                active=sum(active),
                active_mask=to_mask(active),
                errors=sum(1 for w in ws if w.last_error_number),
                relay_waiting=sum(1 for w in ws if w.state == RELAY_READ_STATE),
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class StoredRead:
    """One stored row as the heatmap needs it (``ts_ms``: epoch milliseconds)."""

    ts_ms: int
    workers: int
    busy_mask: bytes | None
    active_mask: bytes


@dataclass(frozen=True, slots=True)
class HeatBucket:
    """Shares are per worker position (0 = the lowest worker id), None where the reads of the
    bucket could not tell (MySQL 5.7 busy) or the worker did not exist."""

    t: int  # bucket start, epoch milliseconds
    reads: int
    workers: int  # the most workers seen in the bucket
    busy_share: list[float | None]
    active_share: list[float | None]
    busy_avg: float | None  # mean busy workers per read
    active_avg: float


def heatmap(reads: Sequence[StoredRead], start_ms: int, width_ms: int) -> list[HeatBucket]:
    """Buckets [start + k·width, start + (k+1)·width) that hold at least one read, in order."""
    grouped: dict[int, list[StoredRead]] = {}
    for read in reads:
        grouped.setdefault((read.ts_ms - start_ms) // width_ms, []).append(read)
    return [_bucket(start_ms + k * width_ms, grouped[k]) for k in sorted(grouped)]


# The set bits of each byte value, so a mask is counted a byte at a time, not a bit at a time.
_BITS = tuple(tuple(b for b in range(8) if value >> b & 1) for value in range(256))


def _shares(
    reads: Sequence[StoredRead], width: int, masks: Sequence[bytes | None]
) -> tuple[list[float | None], float | None]:
    """Per worker position: the share of the reads (where it existed) with its bit set.

    A day of 1 Hz reads is 86,400 masks, and a few patterns repeat (idle pools): identical
    masks are counted first (in C, by ``Counter``), then each distinct one is turned into bits
    a byte at a time, instead of testing every bit of every read."""
    known = [(r.workers, m) for r, m in zip(reads, masks, strict=True) if m is not None]
    if not known:
        return [None] * width, None
    hits = [0] * width
    for (_, mask), n in Counter(known).items():
        for j, value in enumerate(mask):
            for b in _BITS[value]:
                if j * 8 + b < width:
                    hits[j * 8 + b] += n
    present = Counter(w for w, _ in known)
    seen = [sum(n for w, n in present.items() if w > i) for i in range(width)]
    shares = [h / s if s else None for h, s in zip(hits, seen, strict=True)]
    return shares, sum(hits) / len(known)


def _bucket(t: int, reads: Sequence[StoredRead]) -> HeatBucket:
    width = max(r.workers for r in reads)
    busy, busy_avg = _shares(reads, width, [r.busy_mask for r in reads])
    active, active_avg = _shares(reads, width, [r.active_mask for r in reads])
    return HeatBucket(t, len(reads), width, busy, active, busy_avg, active_avg or 0.0)
