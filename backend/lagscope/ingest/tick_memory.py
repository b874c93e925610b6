"""What a cluster's ticks remember of the rows they appended, so the next tick need not read
them back: the newest source-progress point per stream, the newest applier-worker reading; and
each channel's diagnosis memory and ETA memory, and each instance's last counters, which the
store gets only every ``DIAGNOSIS_CHECKPOINT_S``.

Kept with the cluster by a poll owner (ingest/tick_cache.py), the only writer of those rows
while it holds the shard; a Celery tick starts with an empty memory every time, and so does a
tick after a reload (an edit elsewhere, a takeover, a failed tick). Empty means "not known":
each entry is then read from the store once, as before, and remembered from that tick on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lagscope.analysis.causes.episodes import EpisodeState
from lagscope.analysis.causes.model import DiagnosisMemory
from lagscope.analysis.eta import EtaMemory

# A channel's diagnosis memory (its recent polls' figures: ~60 rates, ten pace points, …) was the
# largest JSON a tick encoded and wrote, every second for every channel. An owner keeps it here
# and writes it this often: an owner that takes the shard over goes on from a memory at most
# this much older than the gap (diagnosis drops a memory only past 30 s or ten intervals), so
# the recent-poll windows miss a few polls, and the stored causes and episodes miss nothing.
# The ETA band's memory (its last ten rates) is kept the same way: encoded and written every
# poll it was the next largest JSON of a tick, and its window drops rates older than 60 s. So
# are an instance's counters (its rates are over the last poll kept in memory; after a takeover
# the first rates are over the gap and up to this much more, averaged as over any gap).
DIAGNOSIS_CHECKPOINT_S = 5.0


@dataclass(slots=True)
class WorkerReading:
    """An instance's ``applier_workers`` row as stored."""

    read_at: datetime
    problem: str | None
    workers: list[dict[str, Any]]


@dataclass(slots=True)
class TickMemory:
    # (instance id, stream) → (µs, value) of its newest source_progress row.
    newest_progress: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)
    # Instance id → its applier_workers row; an id mapped to None has none stored.
    workers: dict[int, WorkerReading | None] = field(default_factory=dict)
    # Channel id → its newest diagnosis memory and when (poll epoch s) the store last got one.
    diagnosis: dict[int, KeptDiagnosis] = field(default_factory=dict)
    # Channel id → its newest ETA memory and when (poll epoch s) the store last got one.
    eta: dict[int, KeptEta] = field(default_factory=dict)
    # Instance id → its counters as last polled, when, and when the store last got them.
    counters: dict[int, KeptCounters] = field(default_factory=dict)
    # Channel id → the episode state JSON its last tick stored, and that state parsed.
    episodes: dict[int, tuple[Mapping[str, Any], EpisodeState]] = field(default_factory=dict)


@dataclass(slots=True)
class KeptDiagnosis:
    memory: DiagnosisMemory
    stored_at: float


@dataclass(slots=True)
class KeptCounters:
    values: Mapping[str, int]
    at: float  # epoch s, the poll that read them
    stored_at: float


@dataclass(slots=True)
class KeptEta:
    memory: EtaMemory
    stored_at: float


def checkpoint_due(stored_at: float, at: float) -> bool:
    """Whether a memory the store last got at ``stored_at`` goes to it again at poll ``at``:
    every ``DIAGNOSIS_CHECKPOINT_S``, and after a clock that went back."""
    return not at - DIAGNOSIS_CHECKPOINT_S < stored_at <= at
