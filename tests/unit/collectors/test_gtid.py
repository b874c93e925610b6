"""Tests for lagscope.collectors.gtid: parsing, set algebra and lag counts for both flavors.

Examples come from docs/replication.md ("GTID formats") and the MySQL manual (GTID format and
storage); the property tests check GtidSet against a model made of plain Python sets of (source_id,
n) over small ranges, built from the raw generated input rather than from GtidSet itself.
"""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lagscope.collectors.gtid import (
    MAX_GNO,
    DomainCounts,
    Gtid,
    GtidCounts,
    GtidPos,
    GtidSet,
    gtid_counts,
    mariadb_counts,
    mysql_counts,
)

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"  # the MySQL manual's example UUID, lower-cased
U2 = "2174b383-5441-11e8-b90a-c80aa9429562"
UPPER_U1 = U1.upper()

# database=None: no .hypothesis/ directory left in the shared checkout; 200 examples keeps the
# whole module well under the 10 s budget on the shared 2-core machine.
FAST = settings(max_examples=200, deadline=None, database=None)


# --- strategies and the model ----------------------------------------------------------------

SOURCE_IDS = [U1, U2, f"{U1}:domain_1", f"{U1}:t2", f"{U2}:domain_1"]
RawSet = list[tuple[str, list[tuple[int, int]]]]
Model = set[tuple[str, int]]

intervals = st.lists(
    st.tuples(st.integers(1, 40), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=4,
)
# A list, not a dict: the same source id may appear twice, which parse/constructor must merge.
raw_sets = st.lists(st.tuples(st.sampled_from(SOURCE_IDS), intervals), max_size=4)


def model_of(raw: RawSet) -> Model:
    return {(sid, n) for sid, ivs in raw for a, b in ivs for n in range(a, b + 1)}


def build(raw: RawSet) -> GtidSet:
    return GtidSet(tuple((sid, tuple(ivs)) for sid, ivs in raw))


def model_of_set(s: GtidSet) -> Model:
    """Membership as GtidSet itself answers it, probed over the whole generated range."""
    return {(sid, n) for sid in SOURCE_IDS for n in range(0, 48) if (sid, n) in s}


gtid_sets = raw_sets.map(build)


@st.composite
def messy_text(draw: st.DrawFn, raw: RawSet) -> str:
    """Render ``raw`` as a server might, plus noise: case, whitespace, newlines, order."""
    space = st.sampled_from(["", " ", "\n", " \n  "])
    items = []
    for sid, ivs in raw:
        uuid, _, tag = sid.partition(":")
        head = uuid.upper() if draw(st.booleans()) else uuid
        if tag:
            head += ":" + (tag.upper() if draw(st.booleans()) else tag)
        ranges = [
            f"{a}" if a == b and draw(st.booleans()) else f"{a}{draw(space)}-{draw(space)}{b}"
            for a, b in draw(st.permutations(ivs))
        ]
        parts = [head, *ranges]
        item = parts[0] + "".join(f"{draw(space)}:{draw(space)}{p}" for p in parts[1:])
        items.append(draw(space) + item + draw(space))
    return draw(st.sampled_from([",", ", ", ",\n"])).join(items)


# --- MySQL parsing: examples ---------------------------------------------------------------------


def test_single_gtid_from_manual() -> None:
    s = GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:23")
    assert s.as_dict() == {U1: ((23, 23),)}
    assert str(s) == f"{U1}:23"
    assert s.count() == 1
    assert (UPPER_U1, 23) in s
    assert (U1, 22) not in s


def test_set_with_gaps_and_two_uuids() -> None:
    s = GtidSet.parse(f"{UPPER_U1}:1-5:11:47-49,{U2}:1-19")
    assert s.intervals(U1) == ((1, 5), (11, 11), (47, 49))
    assert s.intervals(U2) == ((1, 19),)
    assert s.count() == 5 + 1 + 3 + 19
    # Canonical output sorts UUIDs, as the server does.
    assert str(s) == f"{U2}:1-19,{U1}:1-5:11:47-49"


def test_newline_after_each_comma_as_servers_print() -> None:
    text = f"{U2}:1-19,\n{U1}:1-5:11:47-49\n"
    assert GtidSet.parse(text) == GtidSet.parse(f"{U2}:1-19,{U1}:1-5:11:47-49")


def test_whitespace_around_separators() -> None:
    s = GtidSet.parse(f"  {U1} : 1 - 5 :\t7 ,\n {U2}:3  ")
    assert s.as_dict() == {U1: ((1, 5), (7, 7)), U2: ((3, 3),)}


@pytest.mark.parametrize("text", ["", "   ", "\n", ",", " , ,\n"])
def test_empty_text_is_the_empty_set(text: str) -> None:
    s = GtidSet.parse(text)
    assert s == GtidSet()
    assert not s
    assert s.count() == 0
    assert str(s) == ""


def test_tagged_set() -> None:
    s = GtidSet.parse(f"{UPPER_U1}:Domain_1:1-3:15-21, {U1}:domain_2:8-52")
    assert s.as_dict() == {f"{U1}:domain_1": ((1, 3), (15, 21)), f"{U1}:domain_2": ((8, 52),)}
    assert (f"{U1}:DOMAIN_1", 16) in s
    assert (U1, 16) not in s  # the untagged stream is a different source id
    assert str(s) == f"{U1}:domain_1:1-3:15-21:domain_2:8-52"


def test_tag_applies_until_the_next_tag() -> None:
    s = GtidSet.parse(f"{U1}:1-5:domain_1:1-3:11:tag_b:7")
    assert s.as_dict() == {
        U1: ((1, 5),),
        f"{U1}:domain_1": ((1, 3), (11, 11)),
        f"{U1}:tag_b": ((7, 7),),
    }
    # Server form: untagged ranges first, then each tag, all in the UUID's one item.
    assert str(s) == f"{U1}:1-5:domain_1:1-3:11:tag_b:7"


def test_repeated_uuid_unsorted_overlapping_adjacent_are_normalised() -> None:
    s = GtidSet.parse(f"{U1}:47-49:1-3:2-5, {U2}:4, {U1}:6-6:11, {U1.upper()}:10")
    assert s.intervals(U1) == ((1, 6), (10, 11), (47, 49))
    assert str(s) == f"{U2}:4,{U1}:1-6:10-11:47-49"


def test_uuid_or_tag_without_intervals_adds_nothing() -> None:
    assert GtidSet.parse(f"{U1},{U2}:5:only_tag") == GtidSet.parse(f"{U2}:5")


def test_extreme_numbers_and_big_counts() -> None:
    s = GtidSet.parse(f"{U1}:1-{MAX_GNO},{U2}:1-{MAX_GNO}")
    assert s.count() == 2 * MAX_GNO  # more than fits in a signed 64-bit
    assert (U2, MAX_GNO) in s
    assert str(GtidSet.parse(str(s))) == str(s)


def test_tag_of_32_characters_is_the_limit() -> None:
    tag = "_" + "a1" * 15 + "z"
    assert len(tag) == 32
    assert GtidSet.parse(f"{U1}:{tag}:1").source_ids() == (f"{U1}:{tag}",)
    with pytest.raises(ValueError, match=re.escape(tag + "x")):
        GtidSet.parse(f"{U1}:{tag}x:1")


def test_contains_rejects_other_shapes() -> None:
    s = GtidSet.parse(f"{U1}:1-5")
    assert (U1, 3) in s
    assert U1 not in s
    assert (U1, "3") not in s
    assert (U1, 3, 4) not in s


def test_constructor_validates() -> None:
    with pytest.raises(ValueError, match="not-a-uuid"):
        GtidSet((("not-a-uuid", ((1, 2),)),))
    with pytest.raises(ValueError, match="'0'"):
        GtidSet.from_mapping({U1: [(0, 2)]})


# --- MySQL parsing: errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bad_part"),
    [
        ("garbage", "garbage"),
        (f"{U1}:1-5,hello:3", "hello"),
        (f"{U1}:0", "'0'"),
        (f"{U1}:0-4", "'0'"),
        (f"{U1}:9-3", "9-3"),
        (f"{U1}:{MAX_GNO + 1}", str(MAX_GNO + 1)),
        (f"{U1}:1-{MAX_GNO + 1}", str(MAX_GNO + 1)),
        ("3e11fa47-71ca-11e1-9e33-c80aa942956:1", "3e11fa47-71ca-11e1-9e33-c80aa942956"),
        ("3e11fa47-71ca-11e1-9e33-c80aa942956g:1", "c80aa942956g"),
        ("3e11fa4771ca11e19e33c80aa9429562:1", "3e11fa4771ca11e19e33c80aa9429562"),
        (f"{U1}:", "''"),
        (f"{U1}:1::2", "''"),
        (f"{U1}:1-", "1-"),
        (f"{U1}:-1", "-1"),
        (f"{U1}:1 2", "1 2"),
        (f"{U1}:1-2-3", "1-2-3"),
        (f"{U1}:9tag:1", "9tag"),
        (f"{U1}:tag-x:1", "tag-x"),
        (f"{U1}:ünï:1", "ünï"),
        (f"{U1}:１", "１"),  # a full-width digit: \d would take it, the server would not
    ],
)
def test_invalid_gtid_set_names_the_bad_part(text: str, bad_part: str) -> None:
    with pytest.raises(ValueError, match=re.escape(bad_part)):
        GtidSet.parse(text)


# --- MySQL set algebra: properties against the model -------------------------------------------


@pytest.mark.slow
@FAST
@given(raw_sets)
def test_count_and_membership_match_model(raw: RawSet) -> None:
    s = build(raw)
    assert s.count() == len(model_of(raw))
    assert model_of_set(s) == model_of(raw)
    assert bool(s) == bool(model_of(raw))


@pytest.mark.slow
@FAST
@given(st.data())
def test_parse_of_messy_server_text_matches_model(data: st.DataObject) -> None:
    raw = data.draw(raw_sets)
    s = GtidSet.parse(data.draw(messy_text(raw)))
    assert model_of_set(s) == model_of(raw)
    assert s == build(raw)


@pytest.mark.slow
@FAST
@given(gtid_sets)
def test_str_round_trips(s: GtidSet) -> None:
    assert GtidSet.parse(str(s)) == s


@pytest.mark.slow
@FAST
@given(gtid_sets)
def test_str_is_canonical_for_equal_sets(s: GtidSet) -> None:
    # Rebuild the same set from shuffled single transactions: a different spelling, equal value.
    singles = sorted(model_of_set(s), key=lambda g: (-g[1], g[0]))
    other = GtidSet(tuple((sid, ((n, n),)) for sid, n in singles))
    assert other == s
    assert hash(other) == hash(s)
    assert str(other) == str(s)


@pytest.mark.slow
@FAST
@given(gtid_sets)
def test_canonical_intervals_are_sorted_disjoint_non_adjacent(s: GtidSet) -> None:
    assert list(s.source_ids()) == sorted(s.source_ids())
    for _, ivs in s:
        assert ivs
        assert all(1 <= a <= b <= MAX_GNO for a, b in ivs)
        assert all(b1 + 1 < a2 for (_, b1), (a2, _) in pairwise(ivs))


@pytest.mark.slow
@FAST
@given(raw_sets, raw_sets)
def test_operations_match_model(raw_a: RawSet, raw_b: RawSet) -> None:
    a, b = build(raw_a), build(raw_b)
    ma, mb = model_of(raw_a), model_of(raw_b)
    assert model_of_set(a | b) == ma | mb
    assert model_of_set(a & b) == ma & mb
    assert model_of_set(a - b) == ma - mb
    assert a.is_subset(b) == (ma <= mb)


@pytest.mark.slow
@FAST
@given(gtid_sets, gtid_sets)
def test_difference_plus_intersection_is_whole(a: GtidSet, b: GtidSet) -> None:
    assert (a - b).count() + (a & b).count() == a.count()
    assert not ((a - b) & b)
    assert a.is_subset(a | b)
    assert (a & b).is_subset(a)
    assert (a - b).is_subset(a)


@pytest.mark.slow
@FAST
@given(gtid_sets, gtid_sets, gtid_sets)
def test_union_commutative_associative(a: GtidSet, b: GtidSet, c: GtidSet) -> None:
    assert a | b == b | a
    assert (a | b) | c == a | (b | c)
    assert a & b == b & a


@pytest.mark.slow
@FAST
@given(gtid_sets, gtid_sets, gtid_sets)
def test_difference_is_anti_monotone(a: GtidSet, b: GtidSet, c: GtidSet) -> None:
    bigger = b | c  # b ⊆ bigger, so removing more can only leave less
    assert (a - bigger).is_subset(a - b)


def test_operators_refuse_other_types() -> None:
    s = GtidSet.parse(f"{U1}:1")
    with pytest.raises(TypeError):
        _ = s | "x"  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = s - {1}  # type: ignore[operator]


# --- MariaDB positions ---------------------------------------------------------------------------


def test_mariadb_position_examples() -> None:
    pos = GtidPos.parse("0-1-2042,1-20-500")
    assert pos.gtids == (Gtid(0, 1, 2042), Gtid(1, 20, 500))
    assert pos.seq(0) == 2042
    assert pos.seq(1) == 500
    assert pos.seq(7) == 0
    assert str(pos) == "0-1-2042,1-20-500"
    assert GtidPos.parse("0-1-10").get(0) == Gtid(0, 1, 10)
    assert str(Gtid.parse("0-1-10")) == "0-1-10"


def test_mariadb_whitespace_order_and_equal_duplicates() -> None:
    pos = GtidPos.parse(" 1-20-500,\n0-1-2042 , 0-1-2042\n")
    assert pos == GtidPos.parse("0-1-2042,1-20-500")
    assert str(pos) == "0-1-2042,1-20-500"


@pytest.mark.parametrize("text", ["", "  ", "\n"])
def test_mariadb_empty_position(text: str) -> None:
    pos = GtidPos.parse(text)
    assert not pos
    assert str(pos) == ""
    assert pos.seq(0) == 0


def test_mariadb_extreme_values() -> None:
    pos = GtidPos.parse(f"{2**32 - 1}-{2**32 - 1}-{2**64 - 1}")
    assert pos.seq(2**32 - 1) == 2**64 - 1


@pytest.mark.parametrize(
    ("text", "bad_part"),
    [
        ("garbage", "garbage"),
        ("0-x-5", "'x'"),
        ("a-1-5", "'a'"),
        ("0-1-five", "five"),
        ("0-1-", "seq_no ''"),
        ("0-1", "0-1"),
        ("0-1-2-3", "0-1-2-3"),
        ("0--1-2", "0--1-2"),
        ("0-1-1.5", "1.5"),
        ("0-1-2,0-2-3", "'0-2-3'"),
        (f"{2**32}-1-1", str(2**32)),
        (f"0-{2**32}-1", str(2**32)),
        (f"0-1-{2**64}", str(2**64)),
        ("0-1-１", "１"),
    ],
)
def test_invalid_mariadb_position_names_the_bad_part(text: str, bad_part: str) -> None:
    with pytest.raises(ValueError, match=re.escape(bad_part)):
        GtidPos.parse(text)


# --- counting: MySQL -----------------------------------------------------------------------------


def counts(src: str, retrieved: str, executed: str) -> GtidCounts:
    return gtid_counts("mysql", src, retrieved, executed)


def test_mysql_caught_up() -> None:
    c = counts(f"{U1}:1-100", f"{U1}:1-100", f"{U1}:1-100")
    assert c == GtidCounts(0, 0, 0, 0, per_domain=None, exact=True)


def test_mysql_sql_thread_stopped() -> None:
    c = counts(f"{U1}:1-100", f"{U1}:1-100", f"{U1}:1-60")
    assert (c.trx_behind, c.not_received, c.received_not_applied, c.errant) == (40, 0, 40, 0)


def test_mysql_io_thread_behind() -> None:
    c = counts(f"{U1}:1-100", f"{U1}:1-70", f"{U1}:1-60")
    assert (c.trx_behind, c.not_received, c.received_not_applied, c.errant) == (40, 30, 10, 0)


def test_mysql_retrieved_set_restarted_after_relay_log_purge() -> None:
    # Retrieved_Gtid_Set only covers the current relay logs: 50-60 here. What was executed is
    # received too, so not_received must use retrieved ∪ executed, not retrieved alone.
    c = counts(f"{U1}:1-100", f"{U1}:50-60", f"{U1}:1-55")
    assert (c.trx_behind, c.not_received, c.received_not_applied, c.errant) == (45, 40, 5, 0)


def test_mysql_partially_received_transaction_counts_as_received() -> None:
    c = counts(f"{U1}:1-10", f"{U1}:1-11", f"{U1}:1-9")
    assert (c.trx_behind, c.not_received, c.received_not_applied) == (1, 0, 2)


def test_mysql_errant_transaction_on_replica() -> None:
    c = counts(f"{U1}:1-100", f"{U1}:1-100", f"{U1}:1-100,\n{U2}:1-3")
    assert (c.trx_behind, c.not_received, c.received_not_applied, c.errant) == (0, 0, 0, 3)


def test_mysql_tagged_and_gapped_sets() -> None:
    src = f"{U1}:1-10:domain_1:1-5,{U2}:1-4"
    executed = f"{U1}:1-3:5-10:domain_1:1-2,{U2}:1-4:9"
    c = counts(src, f"{U1}:domain_1:1-4", executed)
    # Behind: U1:4 and domain_1:3-5. Not received: U1:4, domain_1:5. Errant: U2:9.
    assert (c.trx_behind, c.not_received, c.received_not_applied, c.errant) == (4, 2, 2, 1)


@pytest.mark.slow
@FAST
@given(raw_sets, raw_sets, raw_sets)
def test_mysql_counts_match_model(raw_s: RawSet, raw_r: RawSet, raw_e: RawSet) -> None:
    ms, mr, me = model_of(raw_s), model_of(raw_r), model_of(raw_e)
    c = mysql_counts(build(raw_s), build(raw_r), build(raw_e))
    assert c.trx_behind == len(ms - me)
    assert c.not_received == len(ms - (mr | me))
    assert c.received_not_applied == len(mr - me)
    assert c.errant == len(me - ms)
    assert c.per_domain is None
    assert c.exact


# --- counting: MariaDB ---------------------------------------------------------------------------


def maria(src: str, io: str, slave: str, strict_mode: bool = True) -> GtidCounts:
    return gtid_counts("mariadb", src, io, slave, strict_mode)


def four(c: GtidCounts | DomainCounts) -> tuple[int, int, int, int]:
    return (c.trx_behind, c.not_received, c.received_not_applied, c.errant)


def test_mariadb_caught_up() -> None:
    c = maria("0-1-2042", "0-1-2042", "0-1-2042")
    assert four(c) == (0, 0, 0, 0)
    assert c.per_domain == {0: DomainCounts(0, 0, 0, 0)}
    assert c.exact


def test_mariadb_sql_thread_stopped() -> None:
    c = maria("0-1-2042", "0-1-2042", "0-1-2000")
    assert four(c) == (42, 0, 42, 0)


def test_mariadb_io_thread_behind() -> None:
    c = maria("0-1-2042", "0-1-2030", "0-1-2000")
    assert four(c) == (42, 12, 30, 0)


def test_mariadb_io_pos_older_than_slave_pos() -> None:
    # After a restart Gtid_IO_Pos can trail gtid_slave_pos; applied implies received.
    c = maria("0-1-100", "0-1-50", "0-1-80")
    assert four(c) == (20, 20, 0, 0)


def test_mariadb_two_domains() -> None:
    c = maria("0-1-2042,1-20-500", "0-1-2042,1-20-450", "0-1-2040,1-20-400")
    assert c.per_domain == {0: DomainCounts(2, 0, 2, 0), 1: DomainCounts(100, 50, 50, 0)}
    assert four(c) == (102, 50, 52, 0)
    assert c.exact


def test_mariadb_domain_missing_on_replica_counts_whole_domain() -> None:
    c = maria("0-1-100,1-20-30", "0-1-100", "0-1-100")
    assert c.per_domain is not None
    assert four(c.per_domain[1]) == (30, 30, 0, 0)
    assert c.exact


def test_mariadb_errant_write_from_other_server() -> None:
    c = maria("0-1-100", "0-1-100", "0-2-103")
    assert four(c) == (0, 0, 0, 3)
    assert not c.exact


def test_mariadb_domain_only_on_replica_is_errant() -> None:
    c = maria("0-1-100", "0-1-100", "0-1-100,5-9-7")
    assert c.per_domain is not None
    assert four(c.per_domain[5]) == (0, 0, 0, 7)
    assert c.errant == 7
    assert not c.exact


def test_mariadb_without_strict_mode_is_an_estimate() -> None:
    c = maria("0-1-100", "0-1-100", "0-1-90", strict_mode=False)
    assert four(c) == (10, 0, 10, 0)
    assert not c.exact


def test_gtid_counts_rejects_unknown_product() -> None:
    with pytest.raises(ValueError, match="postgres"):
        gtid_counts("postgres", "", "", "")  # type: ignore[arg-type]


def test_gtid_counts_propagates_parse_errors() -> None:
    with pytest.raises(ValueError, match="'x'"):
        gtid_counts("mariadb", "0-1-2", "0-x-1", "")
    with pytest.raises(ValueError, match="garbage"):
        gtid_counts("mysql", "", "garbage", "")


gtids = st.builds(Gtid, st.integers(0, 2), st.integers(1, 2), st.integers(0, 60))
positions = st.lists(gtids, max_size=3, unique_by=lambda g: g.domain_id).map(
    lambda gs: GtidPos(tuple(gs))
)


@pytest.mark.slow
@FAST
@given(positions)
def test_mariadb_str_round_trips(pos: GtidPos) -> None:
    assert GtidPos.parse(str(pos)) == pos
    assert list(pos.domains()) == sorted(pos.domains())


@pytest.mark.slow
@FAST
@given(positions, positions, positions, st.booleans())
def test_mariadb_counts_never_negative_and_sum_domains(
    src: GtidPos, io: GtidPos, slave: GtidPos, strict: bool
) -> None:
    c = mariadb_counts(src, io, slave, strict)
    assert c.per_domain is not None
    assert min(four(c)) >= 0
    assert all(min(four(d)) >= 0 for d in c.per_domain.values())
    for i, total in enumerate(four(c)):
        assert total == sum(four(d)[i] for d in c.per_domain.values())
    # Behind and errant are the two sides of one difference: never both in a domain.
    assert all(d.trx_behind == 0 or d.errant == 0 for d in c.per_domain.values())
    if not strict:
        assert not c.exact


@st.composite
def ordered_positions(draw: st.DrawFn) -> tuple[GtidPos, GtidPos, GtidPos]:
    """Per domain slave ≤ io ≤ source, all from the source's server: the normal pipeline."""
    src, io, slave = [], [], []
    for domain in draw(st.sets(st.integers(0, 3), max_size=3)):
        server = draw(st.integers(1, 3))
        r, i, s = sorted(draw(st.lists(st.integers(0, 10**12), min_size=3, max_size=3)))
        src.append(Gtid(domain, server, s))
        io.append(Gtid(domain, server, i))
        slave.append(Gtid(domain, server, r))
    return GtidPos(tuple(src)), GtidPos(tuple(io)), GtidPos(tuple(slave))


@pytest.mark.slow
@FAST
@given(ordered_positions())
def test_mariadb_behind_splits_into_network_and_apply(
    positions3: tuple[GtidPos, GtidPos, GtidPos],
) -> None:
    src, io, slave = positions3
    c = mariadb_counts(src, io, slave)
    assert c.trx_behind == c.not_received + c.received_not_applied
    assert c.trx_behind == sum(src.seq(d) - slave.seq(d) for d in src.domains())
    assert c.errant == 0
    assert c.exact


@pytest.mark.slow
@FAST
@given(positions, positions)
def test_mariadb_replica_ahead_is_errant_and_inexact(src: GtidPos, slave: GtidPos) -> None:
    c = mariadb_counts(src, slave, slave)
    assert c.errant == sum(max(0, slave.seq(d) - src.seq(d)) for d in slave.domains())
    ahead = any(slave.seq(d) > src.seq(d) or src.get(d) is None for d in slave.domains())
    assert c.exact is not ahead
