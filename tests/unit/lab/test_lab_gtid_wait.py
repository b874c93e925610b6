"""The lab's catch-up wait compares MariaDB GTID positions per domain by sequence number, and
waits as long as the replicas make progress (a slow machine drains slowly; a stopped replica
fails after the timeout)."""

import time
from types import SimpleNamespace

import pytest

from lagscope.lab.servers import LabError
from lagscope.lab.topology import Lab
from lagscope.lab.topology.catch_up import _gtid_reached, _gtid_set


def test_a_replica_past_the_target_has_reached_it():
    assert _gtid_reached(_gtid_set("0-1-120"), _gtid_set("0-1-115"))
    assert _gtid_reached(_gtid_set("0-1-115"), _gtid_set("0-1-115"))


def test_a_replica_short_of_the_target_has_not():
    assert not _gtid_reached(_gtid_set("0-1-114"), _gtid_set("0-1-115"))


def test_every_domain_counts_and_a_missing_domain_is_behind():
    target = _gtid_set("0-1-10,1-2-5")
    assert _gtid_reached(_gtid_set("1-2-5,0-1-12"), target)
    assert not _gtid_reached(_gtid_set("0-1-12"), target)
    assert not _gtid_reached(_gtid_set("0-1-12,1-2-4"), target)


def test_the_sequence_not_the_server_id_decides():
    # After a switchover another server writes the same domain: its numbers go on rising.
    assert _gtid_reached(_gtid_set("0-2-30"), _gtid_set("0-1-29"))


class ScriptedLab(Lab):
    """A lab whose replica positions come from a script: each read of replica1's position
    returns the next value of ``steps`` (the last one repeats), the source sits at ``target``."""

    def __init__(self, steps: list[str], target: str = "0-1-100") -> None:
        self.replicas = [SimpleNamespace(name="replica1")]  # type: ignore[list-item]
        self._steps = iter(steps)
        self._last = steps[0]
        self._target = target

    def is_running(self, name: str) -> bool:
        return True

    def _source_position(self) -> dict[str, str] | None:
        return _gtid_set(self._target)

    def _explain(self, name: str) -> str:
        return f"{name}: at {self._last}"

    def _replica_position(self, replica: object) -> str | None:
        self._last = next(self._steps, self._last)
        time.sleep(0.01)
        return self._last


def creeping(until: int) -> list[str]:
    """A replica applying one transaction per read up to ``until``."""
    return [f"0-1-{n}" for n in range(1, until + 1)]


@pytest.mark.slow
def test_a_replica_still_applying_is_waited_for_beyond_the_timeout():
    # 100 reads of ~10 ms: about 1 s of steady progress against a 0.2 s timeout.
    started = time.monotonic()
    ScriptedLab(creeping(100)).wait_caught_up(timeout_s=0.2)
    assert time.monotonic() - started > 0.2


@pytest.mark.slow
def test_a_replica_that_stopped_applying_fails_after_the_timeout():
    started = time.monotonic()
    with pytest.raises(LabError, match="without progress"):
        ScriptedLab(creeping(5)).wait_caught_up(timeout_s=0.3)
    assert time.monotonic() - started < 5  # not the cap


@pytest.mark.slow
def test_progress_is_waited_for_only_up_to_the_cap():
    with pytest.raises(LabError, match="the cap"):
        ScriptedLab(creeping(100_000)).wait_caught_up(timeout_s=0.2, max_wait_s=0.5)
