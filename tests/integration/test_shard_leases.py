"""Shard leases with fencing tokens in a real store (engine/leases.py), SQLite and PostgreSQL:
owners share the shards, rebalance when one joins or leaves, take over a silent one's shards
once its leases ran out, and a write fenced with a stale token is refused and rolled back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.db import make_engine, make_session_factory
from lagscope.engine.leases import Leases, fence
from lagscope.errors import FencingLost
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster, PollOwner, ShardLease
from lagscope.store_setup import upgrade

from .postgres import ThrowawayPostgres

pytestmark = pytest.mark.integration

SHARDS = 16
LEASE_S = 1.2


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgresql"])
def sessions(
    request: pytest.FixtureRequest, tmp_path: Path, postgres: ThrowawayPostgres
) -> Iterator[sessionmaker[Session]]:
    url = f"sqlite:///{tmp_path / 'leases.db'}" if request.param == "sqlite" else postgres.url
    upgrade(url)
    engine = make_engine(url)
    factory = make_session_factory(engine)
    with factory() as s, s.begin():  # a module-wide PostgreSQL: start each test clean
        s.query(ShardLease).delete()
        # The owners too: each test's clock starts at the same moment, so an earlier test's
        # owner would look alive (and be some shards' preferred owner) in the next one.
        s.query(PollOwner).delete()
    try:
        yield factory
    finally:
        engine.dispose()


def _owner(sessions: sessionmaker[Session], name: str, clock: Clock) -> Leases:
    return Leases(sessions, name, SHARDS, LEASE_S, clock)


def test_owners_share_the_shards_and_rebalance_when_one_joins(sessions) -> None:
    clock = Clock()
    a = _owner(sessions, "a", clock)
    first = a.beat()
    assert set(first.held) == set(range(SHARDS)) and first.gained == set(range(SHARDS))
    b = _owner(sessions, "b", clock)
    b.beat()  # b is now a member; a gives up b's shards at its next beat, b takes them after
    clock.now += 0.2
    gave = a.beat()
    clock.now += 0.2
    took = b.beat()
    assert gave.lost and gave.lost == took.gained
    assert set(gave.held).isdisjoint(took.held)
    assert set(gave.held) | set(took.held) == set(range(SHARDS))
    assert 0 < len(took.held) < SHARDS


def test_a_shard_given_up_waits_for_its_preferred_owner_not_the_one_that_gave_it_up(
    sessions,
) -> None:
    """Given up at one beat, the shard is not taken back at the next if the owner it was given
    up for has not beaten since (it was: the row looked orphaned at once, and it went back and
    forth until the other's beat fell between two of the giver's)."""
    clock = Clock()
    a, b = _owner(sessions, "a", clock), _owner(sessions, "b", clock)
    a.beat()
    clock.now += 0.2
    b.beat()  # a member now, holding nothing yet
    clock.now += 0.2
    gave = a.beat()
    assert gave.lost
    clock.now += 0.01  # a beats again before b does
    again = a.beat()
    assert not again.gained and set(again.held) == set(gave.held)
    clock.now += 0.2
    assert set(b.beat().held) == gave.lost


def test_a_shard_given_up_to_an_owner_that_died_before_taking_it_is_taken_back(sessions) -> None:
    clock = Clock()
    a, b = _owner(sessions, "a", clock), _owner(sessions, "b", clock)
    a.beat()
    clock.now += 0.2
    b.beat()  # then b is killed, before its next beat
    clock.now += 0.2
    gave = a.beat()
    assert gave.lost
    clock.now += LEASE_S * 0.5  # b still seen alive: its shards wait for it
    assert set(a.beat().held) == set(gave.held)
    clock.now += LEASE_S  # b no longer seen alive: a wants every shard again
    assert set(a.beat().held) == set(range(SHARDS))


def test_a_silent_owners_shards_are_taken_once_its_leases_ran_out(sessions) -> None:
    clock = Clock()
    a, b = _owner(sessions, "a", clock), _owner(sessions, "b", clock)
    a.beat()
    b.beat()
    a.beat()
    b.beat()
    a_shards = set(a.held)
    assert a_shards
    # a stops beating (killed). Within its lease nothing moves …
    clock.now += LEASE_S * 0.9
    assert set(b.beat().held).isdisjoint(a_shards)
    # … and once it has run out, b takes them all, each with a new token.
    clock.now += LEASE_S * 0.2
    took = b.beat()
    assert a_shards <= took.gained and set(took.held) == set(range(SHARDS))
    with sessions() as s:
        tokens = {
            shard: token for shard, token in s.execute(select(ShardLease.shard, ShardLease.token))
        }
    assert all(tokens[shard] == 2 for shard in a_shards)


def test_a_write_fenced_with_a_stale_token_is_refused_and_rolled_back(sessions) -> None:
    clock = Clock()
    a = _owner(sessions, "a", clock)
    a.beat()
    shard, token = 3, a.held[3]
    # A tick of a's that stalls past its lease: b takes the shard meanwhile.
    clock.now += LEASE_S * 2
    b = _owner(sessions, "b", clock)
    assert 3 in b.beat().held
    with pytest.raises(FencingLost), sessions() as s, s.begin():
        inventory.create_cluster(s, "written-by-the-old-owner")
        fence(s, shard, "a", token)
    with sessions() as s:
        assert s.scalar(select(func.count()).select_from(Cluster)) == 0
    # The current owner's fenced write goes through.
    with sessions() as s, s.begin():
        inventory.create_cluster(s, "written-by-the-new-owner")
        fence(s, shard, "b", b.held[3])
    with sessions() as s:
        assert s.scalars(select(Cluster.name)).all() == ["written-by-the-new-owner"]


def test_two_owners_taking_the_same_free_shard_one_wins(sessions) -> None:
    clock = Clock()
    a, b = _owner(sessions, "a", clock), _owner(sessions, "b", clock)
    a.beat()
    clock.now += LEASE_S * 3  # a gone; every shard is orphaned, so both may take any
    c = _owner(sessions, "c", clock)
    got_b, got_c = b.beat().held, c.beat().held
    assert set(got_b).isdisjoint(got_c)
    assert set(got_b) | set(got_c) == set(range(SHARDS))


def test_a_clean_stop_gives_the_shards_up_at_once(sessions) -> None:
    clock = Clock()
    a, b = _owner(sessions, "a", clock), _owner(sessions, "b", clock)
    a.beat()
    b.beat()
    a.release_all()
    clock.now += 0.2  # far less than a lease
    assert set(b.beat().held) == set(range(SHARDS))
