"""Shard leases in the store, with fencing tokens.

Why the store and not Redis: polling and recording must go on while the broker is down, and
the store is the one thing a tick cannot do without anyway. A lease is a row per shard
(``shard_leases``): its owner, a token that grows by one at every change of owner, and when it
runs out. An owner renews all its leases and its membership (``poll_owners``) every
``renew_every_s``; a shard whose lease has run out may be taken by another
owner, which bumps the token.

The token is the fence: every tick's transaction ends with :func:`fence`, an UPDATE of the
shard's row that names the owner and the token the shard was taken with. If another owner took
the shard meanwhile, no row matches, :class:`~lagscope.errors.FencingLost` is raised and the
tick's transaction rolls back, so a stalled old owner never writes what the new one writes. On
PostgreSQL and MySQL the fence's row lock holds a takeover back until the tick has committed; on
SQLite one writer at a time gives the same order.

Times are epoch seconds by each owner's clock. A clock that is off can only make a lease look
expired too soon or too late (a shard polled by nobody for a while, or taken over early): the
fence still refuses the old owner's writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import Table, bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.shards import shards_for
from lagscope.errors import FencingLost
from lagscope.models import PollOwner, ShardLease

log = logging.getLogger(__name__)

# A member row no one has renewed for this long is deleted (it is ignored long before).
FORGET_MEMBER_S = 3600.0


@dataclass(slots=True)
class Holdings:
    """What one beat found: the shards held now with their tokens, those gained and lost since
    the previous beat, and the owners alive."""

    held: dict[int, int] = field(default_factory=dict)
    gained: set[int] = field(default_factory=set)
    lost: set[int] = field(default_factory=set)
    members: set[str] = field(default_factory=set)


def fence(session: Session, shard: int, owner: str, token: int) -> None:
    """The last statement of a tick's transaction: refuse it unless ``owner`` still holds
    ``shard`` with ``token``."""
    fence_all(session, owner, {shard: token})


# The leases' statements, built once over the tables (not the mapped classes): a fence ends
# every batch and a beat runs five times a second, and through the ORM's bulk-update path, each
# built anew, they were a quarter of an owner's CPU (py-spy on bench/poll_throughput.py).
_LEASES: Table = ShardLease.__table__  # type: ignore[assignment]
_OWNERS: Table = PollOwner.__table__  # type: ignore[assignment]
_FENCE = (
    update(_LEASES)
    .where(
        _LEASES.c.shard == bindparam("at_shard"),
        _LEASES.c.owner == bindparam("by_owner"),
        _LEASES.c.token == bindparam("with_token"),
    )
    .values(renewed_at=_LEASES.c.renewed_at)
)
_MINE_LOCKED = (
    select(_LEASES.c.shard)
    .where(_LEASES.c.owner == bindparam("by_owner"))
    .order_by(_LEASES.c.shard)
    .with_for_update()
)
_RENEW_MINE = (
    update(_LEASES)
    .where(_LEASES.c.owner == bindparam("by_owner"))
    .values(expires_at=bindparam("until"), renewed_at=bindparam("now"))
)
_ALL_LEASES = select(
    _LEASES.c.shard, _LEASES.c.owner, _LEASES.c.token, _LEASES.c.expires_at
).order_by(_LEASES.c.shard)
_MEMBERS = select(_OWNERS.c.name).where(_OWNERS.c.seen_at > bindparam("alive_since"))
_SEEN = (
    update(_OWNERS).where(_OWNERS.c.name == bindparam("member")).values(seen_at=bindparam("now"))
)


def fence_all(session: Session, owner: str, tokens: Mapping[int, int]) -> None:
    """:func:`fence` for every shard a batch of ticks covers: one shard lost refuses all."""
    connection = session.connection()
    for shard, token in sorted(tokens.items()):  # one order: two fences never deadlock
        result = connection.execute(
            _FENCE, {"at_shard": shard, "by_owner": owner, "with_token": token}
        )
        if result.rowcount != 1:
            raise FencingLost(
                f"shard {shard}: lease token {token} of {owner} is no longer current", shard
            )


class Leases:
    """One owner's side of the leases: ``beat`` renews, takes and gives up shards."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        name: str,
        shards: int,
        lease_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.sessions = sessions
        self.name = name
        self.shards = shards
        self.lease_s = lease_s
        self._clock = clock
        self._started_at = clock()
        self._held: dict[int, int] = {}
        self._rows_made = False

    @property
    def held(self) -> dict[int, int]:
        return dict(self._held)

    def beat(self, busy: frozenset[int] = frozenset()) -> Holdings:
        """Renew membership and leases, give up shards another alive owner should hold (unless
        ``busy``: a tick of theirs is still running), and take the shards this owner should hold
        that nobody holds.

        Each step is a short transaction of its own that locks shard rows in shard order, as
        the ticks' fences do: with several owners and their ticks at once, no two transactions
        wait on each other's rows in a cycle (PostgreSQL would abort one as a deadlock)."""
        if not self._rows_made:
            self._make_rows()
        now = self._clock()
        expires = now + self.lease_s
        before = dict(self._held)
        with self.sessions() as session:
            with session.begin():
                self._renew_member(session, now)
                connection = session.connection()
                connection.execute(_MINE_LOCKED, {"by_owner": self.name}).all()
                connection.execute(
                    _RENEW_MINE, {"by_owner": self.name, "until": expires, "now": now}
                )
            with session.begin():
                connection = session.connection()
                rows = connection.execute(_ALL_LEASES).all()
                alive_since = now - self.lease_s
                members = set(connection.scalars(_MEMBERS, {"alive_since": alive_since}))
            members.add(self.name)
            held = {shard: token for shard, owner, token, _ in rows if owner == self.name}
            wanted = shards_for(self.name, range(self.shards), members)
            # A shard not wanted has another alive member as its preferred owner: give it up.
            for shard in sorted(set(held) - wanted - busy):
                with session.begin():
                    self._release(session, shard, held.pop(shard), now)
            for shard, owner, token, expires_at in rows:
                if shard in held or shard >= self.shards:
                    continue
                free = owner is None or expires_at < now
                # A shard free for a whole lease more than its preferred owner needed: that
                # owner is not taking it (not yet seen alive by it), so anyone alive does. A
                # shard given up counts from when it was given up (its expires_at then), so
                # the owner that gave it up does not take it back at its next beat, before
                # the preferred owner's beat has come.
                orphaned = free and expires_at < now - self.lease_s
                if free and (shard in wanted or orphaned):
                    with session.begin():
                        taken = self._take(session, shard, token, now, expires)
                    if taken is not None:
                        held[shard] = taken
        self._held = held
        return Holdings(
            held=dict(held),
            gained=set(held) - set(before),
            lost={s for s in before if held.get(s) != before[s]},
            members=members,
        )

    def release_all(self) -> None:
        """Give every shard up at once (a clean stop): the others need not wait for the leases
        to run out."""
        now = self._clock()
        with self.sessions() as session, session.begin():
            for shard, token in self._held.items():
                self._release(session, shard, token, now)
            session.execute(delete(PollOwner).where(PollOwner.name == self.name))
        self._held = {}

    def _release(self, session: Session, shard: int, token: int, now: float) -> None:
        """Free at once for the owner that should hold it; for anyone after a lease more."""
        session.execute(
            update(ShardLease)
            .where(
                ShardLease.shard == shard, ShardLease.owner == self.name, ShardLease.token == token
            )
            .values(owner=None, expires_at=now)
            .execution_options(synchronize_session=False)
        )

    def _take(
        self, session: Session, shard: int, token: int, now: float, expires: float
    ) -> int | None:
        """Compare-and-set on the token seen: of two owners taking the same shard, one wins."""
        result = session.execute(
            update(ShardLease)
            .where(ShardLease.shard == shard, ShardLease.token == token)
            .where((ShardLease.owner.is_(None)) | (ShardLease.expires_at < now))
            .values(owner=self.name, token=token + 1, expires_at=expires, renewed_at=now)
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return token + 1

    def _renew_member(self, session: Session, now: float) -> None:
        result = session.connection().execute(_SEEN, {"member": self.name, "now": now})
        if result.rowcount == 0:
            session.execute(
                insert(PollOwner).values(name=self.name, seen_at=now, started_at=self._started_at)
            )
            session.execute(delete(PollOwner).where(PollOwner.seen_at < now - FORGET_MEMBER_S))

    def _make_rows(self) -> None:
        """One row per shard, made by whichever owner comes first (the others' inserts clash
        and are ignored)."""
        with self.sessions() as session:
            existing = set(session.scalars(select(ShardLease.shard)))
        for shard in range(self.shards):
            if shard in existing:
                continue
            try:
                with self.sessions() as session, session.begin():
                    session.execute(
                        insert(ShardLease).values(
                            shard=shard, owner=None, token=0, expires_at=0.0, renewed_at=0.0
                        )
                    )
            except IntegrityError:
                pass  # another owner made it first
        self._rows_made = True
