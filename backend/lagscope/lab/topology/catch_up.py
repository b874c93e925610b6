"""Waiting until a lab's replicas have caught up: the source's position taken once, each
replica's applied position compared per GTID domain, progress told from a stall.

A mixin of the Lab so a test can script the positions it reads (override the readers) and
watch the wait decide.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pymysql

from lagscope.lab import servers
from lagscope.lab.servers import LabError, LabServer
from lagscope.lab.topology.view import LabView


class CatchingUp(LabView):
    """The wait for every replica to apply what the source had written."""

    def wait_caught_up(self, timeout_s: float = 30.0, max_wait_s: float | None = None) -> None:
        """Until every running replica has applied all the source had written when the wait
        began (MASTER_GTID_WAIT's meaning). Not "positions equal at one instant": under a
        steady write load on a saturated machine the replicas were always a few transactions
        behind the moving source position, and the wait timed out with nothing wrong.

        ``timeout_s`` bounds the time *without progress*: while a replica is still applying
        (its position moves) the wait goes on, up to ``max_wait_s`` (default ten times
        ``timeout_s``, at least 10 minutes). A backlog a test built drains at whatever speed a
        shared 2-core machine has; a stopped or broken replica still fails after ``timeout_s``."""
        started = time.monotonic()
        cap = max_wait_s if max_wait_s is not None else max(600.0, 10 * timeout_s)
        deadline = started + timeout_s
        target: dict[str, str] | None = None
        progress = _Progress()
        while behind := self._replicas_behind(target, progress):
            if target is None:
                target = self._source_position()
            now = time.monotonic()
            if progress.moved:
                progress.moved = False
                deadline = min(now + timeout_s, started + cap)
            if now >= deadline:
                details = [self._explain(name) for name in behind]
                if not self.is_running("source"):
                    details.insert(0, self._explain("source"))
                waited = f"{now - started:.0f} s, the last {timeout_s:g} s without progress"
                if now >= started + cap:
                    waited = f"{now - started:.0f} s (the cap), still applying"
                raise LabError(f"not caught up after {waited}: " + "; ".join(details))
            time.sleep(0.02)

    def _source_position(self) -> dict[str, str] | None:
        try:
            return _gtid_set(servers.gtid_positions(self.source)["gtid_binlog_pos"])
        except pymysql.err.MySQLError:
            return None

    def _replicas_behind(
        self, target: dict[str, str] | None = None, progress: _Progress | None = None
    ) -> list[str]:
        """Names of running replicas that have not applied ``target`` (by default the source's
        current position); all of them if the source is down. ``progress`` notes whether a
        replica's position moved since the previous call."""
        running = [r for r in self.replicas if self.is_running(r.name)]
        if target is None and (target := self._source_position()) is None:
            return [r.name for r in running]
        behind = []
        for replica in running:
            position = self._replica_position(replica)
            if progress is not None:
                progress.note(replica.name, position)
            if position is None or not _gtid_reached(_gtid_set(position), target):
                behind.append(replica.name)
        return behind

    def _replica_position(self, replica: LabServer) -> str | None:
        try:
            return servers.gtid_positions(replica)["gtid_slave_pos"]
        except pymysql.err.MySQLError:
            return None

    def _explain(self, name: str) -> str:
        server = self.server(name)
        if not self.is_running(name):
            return f"{name} is not running; its error log ends:\n{servers.error_log_tail(server)}"
        try:
            return f"{name}: {servers.describe(self.server(name))}"
        except pymysql.err.MySQLError as exc:
            return f"{name}: unreachable ({exc})"


def _gtid_set(text: str) -> dict[str, str]:
    """``"0-1-7,1-5-3"`` → ``{"0": "1-7", "1": "5-3"}``: order-free comparison per domain."""
    return dict(part.strip().split("-", 1) for part in text.split(",") if part.strip())


@dataclass(slots=True)
class _Progress:
    """Each replica's last applied position seen by :meth:`Lab.wait_caught_up`."""

    positions: dict[str, str | None] = field(default_factory=dict)
    moved: bool = False

    def note(self, name: str, position: str | None) -> None:
        if name in self.positions and self.positions[name] != position:
            self.moved = True
        self.positions[name] = position


def _gtid_reached(position: dict[str, str], target: dict[str, str]) -> bool:
    """Whether ``position`` holds every domain of ``target`` at the same or a later sequence
    number (MariaDB numbers transactions per domain, whichever server wrote them)."""
    for domain, server_seq in target.items():
        if domain not in position:
            return False
        if int(position[domain].rsplit("-", 1)[1]) < int(server_seq.rsplit("-", 1)[1]):
            return False
    return True
