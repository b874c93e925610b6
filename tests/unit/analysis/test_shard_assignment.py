"""Rendezvous assignment of shards to poll owners (analysis/shards.py)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from lagscope.analysis.shards import preferred_owner, shard_of, shards_for, tick_batches

SHARDS = range(64)


def test_every_shard_has_exactly_one_preferred_owner_among_the_members() -> None:
    members = {"a:1", "b:2", "c:3"}
    held = [shards_for(m, SHARDS, members) for m in sorted(members)]
    assert set().union(*held) == set(SHARDS)
    assert sum(len(h) for h in held) == len(SHARDS)


def test_shards_spread_over_the_owners() -> None:
    members = [f"host-{n}:{1000 + n}:ab" for n in range(4)]
    counts = Counter(preferred_owner(s, members) for s in range(256))
    # 256 shards over 4 owners: none should get fewer than half or more than twice its share.
    assert all(32 <= counts[m] <= 128 for m in members), counts


@given(
    st.sets(st.text(min_size=1, max_size=12), min_size=2, max_size=8),
    st.text(min_size=1, max_size=12),
)
def test_an_owner_leaving_moves_only_its_own_shards(members: set[str], leaving: str) -> None:
    members = {*members, leaving}
    before = {s: preferred_owner(s, members) for s in SHARDS}
    after = {s: preferred_owner(s, members - {leaving}) for s in SHARDS}
    moved = {s for s in SHARDS if before[s] != after[s]}
    assert moved == {s for s in SHARDS if before[s] == leaving}


@given(st.sets(st.text(min_size=1, max_size=12), min_size=1, max_size=8))
def test_the_answer_does_not_depend_on_the_order_members_are_listed(members: set[str]) -> None:
    ordered = sorted(members)
    assert [preferred_owner(s, ordered) for s in SHARDS] == [
        preferred_owner(s, list(reversed(ordered))) for s in SHARDS
    ]


def test_no_member_no_owner_and_shards_by_cluster_id() -> None:
    assert preferred_owner(3, []) is None
    assert [shard_of(c, 4) for c in (0, 1, 4, 7)] == [0, 1, 0, 3]


def test_tick_batches_keep_one_interval_a_shards_clusters_together_and_the_size_cap() -> None:
    due = [(1, 1.0, 5), (5, 1.0, 5), (2, 1.0, 5), (9, 1.0, 5), (3, 5.0, 2), (4, 1.0, 30)]
    batches = tick_batches(due, shards=4, max_instances=10)
    assert sorted(c for b in batches for c in b) == [1, 2, 3, 4, 5, 9]
    by_interval = {c: i for c, i, _ in due}
    sizes = {c: n for c, _, n in due}
    for batch in batches:
        assert len({by_interval[c] for c in batch}) == 1
        assert sum(sizes[c] for c in batch) <= 10 or len(batch) == 1
    # Shard 1 holds clusters 1, 5 and 9: they come one after the other.
    flat = [c for b in batches for c in b]
    ones = [flat.index(c) for c in (1, 5, 9)]
    assert ones == list(range(ones[0], ones[0] + 3))
