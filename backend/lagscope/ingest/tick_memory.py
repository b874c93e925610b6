"""What a cluster's ticks remember of the rows they appended, so the next tick need not read
them back: the newest source-progress point per stream, the newest applier-worker reading.

Kept with the cluster by a poll owner (ingest/tick_cache.py), the only writer of those rows
while it holds the shard; a Celery tick starts with an empty memory every time, and so does a
tick after a reload (an edit elsewhere, a takeover, a failed tick). Empty means "not known":
each entry is then read from the store once, as before, and remembered from that tick on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


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
