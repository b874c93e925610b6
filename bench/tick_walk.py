"""The walk of one steady tick through Lagscope's modules: how often it moves between them.

One cluster (a source and four replicas on the live lab, as :mod:`bench.poll_throughput`
registers them) is ticked as a poll owner ticks it (``poll_clusters``, then the alert judge on
its figures, with ``--rules``), a few times to warm up, then once under ``sys.setprofile`` on
the ticks' thread (the reading threads are not followed: reading a server is one room's job).

Each Lagscope module is a room; third-party code (SQLAlchemy, the drivers) counts as part of the
room that called it. A stay is a run of the walk in one room; the walk enters a room by a call
from another room, or returns to it from one it called. Printed: the stays, the rooms, the
moves that were returns, the moves between recording (ingest/) and the decisions (analysis/),
the same once the calls to helpers (rooms that call no other and
return to their caller) are folded into their callers' stays, and the rooms stayed in most.

    .venv/bin/python bench/tick_walk.py
    .venv/bin/python bench/tick_walk.py --rules 3 --sequence   # and the walk itself
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import lagscope
from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.reader import ClusterReader
from lagscope.lab import Lab, LabConfig
from lagscope.models import Cluster
from lagscope.security.secret_box import store_box
from poll_throughput import SECRET, build_store  # bench/ is the script's dir
from profile_tick import OwnerBatches

ROOT = str(Path(lagscope.__file__).resolve().parent) + "/"


class Walk:
    """Follows calls and returns of Lagscope's functions on one thread."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.rooms: list[str] = []  # the stays, in order
        self.by_return: list[bool] = []  # each stay entered by a return (else by a call)

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event not in ("call", "return"):
            return
        path = frame.f_code.co_filename
        if not path.startswith(ROOT):
            return
        if event == "call":
            self.stack.append(path[len(ROOT) :])
        elif self.stack:
            self.stack.pop()
        if not self.stack:
            return
        here = self.stack[-1]
        if not self.rooms or self.rooms[-1] != here:
            self.rooms.append(here)
            self.by_return.append(event == "return")

    @property
    def returns(self) -> int:
        return sum(self.by_return)

    def without_helpers(self) -> list[str]:
        """The stays once each call into a room that calls no other room and returns to its
        caller (a helper: a type's conversion, a parser) is folded into the caller's stay."""
        rooms, folded = self.rooms, []
        i = 0
        while i < len(rooms):
            leaf = (
                0 < i < len(rooms) - 1
                and not self.by_return[i]
                and self.by_return[i + 1]
                and rooms[i + 1] == rooms[i - 1]
            )
            if leaf:
                i += 2  # the helper's stay and the caller's stay after it
                continue
            folded.append(rooms[i])
            i += 1
        return folded


def crossings(rooms: list[str], floor: str, other: str) -> int:
    """Moves between a room of one floor and a room of the other, either way: how often the
    tick goes from recording (ingest/) to its decisions (analysis/) and back."""
    moves = itertools.pairwise(rooms)
    return sum(1 for a, b in moves if {a.split("/")[0], b.split("/")[0]} == {floor, other})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", type=int, default=0, help="alert rules (poll_throughput's)")
    parser.add_argument("--warmup", type=int, default=6, help="ticks before the one followed")
    parser.add_argument("--sequence", action="store_true", help="print the walk's stays")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lagscope-walk-") as tmp:
        url = f"sqlite:///{tmp}/store.db"
        lab = Lab.start(LabConfig(replicas=2))
        try:
            build_store(url, lab, 1, args.rules)
            sessions = make_session_factory(make_engine(url))
            box = store_box(sessions, SECRET)
            reader = ClusterReader(max_threads=8)
            with sessions() as s:
                ids = [c.id for c in s.query(Cluster)]
            owner = OwnerBatches(sessions, box, reader)

            def tick() -> None:
                owner.tick(ids)

            for _ in range(args.warmup):
                tick()
            walk = Walk()
            sys.setprofile(walk)
            try:
                tick()
            finally:
                sys.setprofile(None)
        finally:
            lab.stop()
    walked = walk.without_helpers()
    print(
        f"one steady tick of one cluster (a source, four replicas; rules={args.rules}):"
        f" {len(walk.rooms)} stays in {len(set(walk.rooms))} rooms ({walk.returns} of the moves"
        f" returns); without the calls to helpers: {len(walked)} stays in {len(set(walked))}"
        " rooms"
    )
    print(
        "  moves between ingest/ and analysis/:"
        f" {crossings(walk.rooms, 'ingest', 'analysis')},"
        f" {crossings(walked, 'ingest', 'analysis')} without the calls to helpers;"
        f" stays in ingest/recording.py: {walk.rooms.count('ingest/recording.py')},"
        f" {walked.count('ingest/recording.py')}"
    )
    for room, n in Counter(walked).most_common(12):
        print(f"  {n:4d} × {room}")
    if args.sequence:
        print(" → ".join(walked))


if __name__ == "__main__":
    main()
