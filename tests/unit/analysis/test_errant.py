"""Known answers for errant transactions (analysis/errant.py), both products."""

from __future__ import annotations

from lagscope.analysis.channel_metrics import ChannelState, SourceView, channel_metrics
from lagscope.analysis.errant import Errant, errant_problem, errant_transactions
from lagscope.collectors.gtid import GtidTexts
from tests.unit.collectors.test_recorded_flavors import load, replay

SOURCE = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
REPLICA = "4f22fa47-71ca-11e1-9e33-c80aa9429562"


def mysql(source: str, executed: str) -> Errant | None:
    return errant_transactions("mysql", GtidTexts(), source, executed, source_uuid=SOURCE)


def mariadb(source: str, slave: str, current: str, source_id: int = 1) -> Errant | None:
    return errant_transactions(
        "mariadb",
        GtidTexts(),
        source,
        slave,
        source_server_id=source_id,
        slave_pos=slave,
        current_pos=current,
    )


def test_mysql_writes_on_the_replica_are_errant_with_their_set() -> None:
    found = mysql(f"{SOURCE}:1-100", f"{SOURCE}:1-90,{REPLICA}:1-3")
    assert found == Errant(3, f"{REPLICA}:1-3")


def test_mysql_a_replica_read_after_its_source_is_not_errant() -> None:
    # The source committed 101-102 between its read and the replica's: not the replica's own.
    assert mysql(f"{SOURCE}:1-100", f"{SOURCE}:1-102") == Errant(0, "")


def test_mysql_gtids_of_a_former_source_missing_here_are_errant() -> None:
    former = "5a33fa47-71ca-11e1-9e33-c80aa9429562"
    found = mysql(f"{SOURCE}:1-100,{former}:1-10", f"{SOURCE}:1-100,{former}:1-12")
    assert found == Errant(2, f"{former}:11-12")


def test_mysql_tagged_writes_of_the_replica_are_errant_and_the_sources_tags_are_not() -> None:
    found = mysql(f"{SOURCE}:1-100:billing:1-5", f"{SOURCE}:1-100:billing:1-7,{REPLICA}:audit:1-2")
    assert found == Errant(2, f"{REPLICA}:audit:1-2")


def test_mariadb_a_write_in_a_domain_of_its_own_is_errant() -> None:
    found = mariadb("0-1-500", slave="0-1-490", current="0-1-490,77-3-3")
    assert found == Errant(3, "77-3-3")


def test_mariadb_a_write_in_the_sources_domain_counts_from_the_last_applied() -> None:
    found = mariadb("0-1-500", slave="0-1-490", current="0-3-492")
    assert found == Errant(2, "0-3-492")


def test_mariadb_replicated_only_is_not_errant_even_read_after_the_source() -> None:
    assert mariadb("0-1-500", slave="0-1-502", current="0-1-502") == Errant(0, "")


def test_mariadb_gtids_applied_from_a_former_source_beyond_this_one_are_errant() -> None:
    found = mariadb("0-2-500", slave="0-5-503", current="0-5-503", source_id=1)
    assert found == Errant(3, "0-5-503")


def test_mariadb_the_sources_own_last_gtid_is_not_errant() -> None:
    # A former source that wrote 0-3-50, now replicating from the server that took it over.
    assert mariadb("0-3-50", slave="", current="0-3-50") == Errant(0, "")


def test_unparsable_or_unread_positions_give_no_answer() -> None:
    assert mysql(f"{SOURCE}:1-100", "not a set") is None
    assert errant_transactions("mariadb", GtidTexts(), "0-1-5", "0-1-5") is None


def test_the_problem_names_the_set_and_what_to_do() -> None:
    assert errant_problem("replica2", "mysql", 0, "") is None
    text = errant_problem("replica2", "mysql", 3, f"{REPLICA}:1-3")
    assert text is not None
    assert text.startswith(f"replica2 has 3 transactions the source never wrote: {REPLICA}:1-3")
    assert "SET GTID_NEXT" in text and "never fail over to replica2" in text
    maria = errant_problem("replica1", "mariadb", 1, "77-3-1\u202e")
    assert maria is not None and "⟨U+202E⟩" in maria and "DELETE_DOMAIN_ID" in maria


def test_a_recorded_mysql_replica_names_its_own_transactions() -> None:
    """MySQL 8.0 as recorded (tests/fixtures/mysql80_replica.json): 12 transactions of the
    replica's own UUID from before it became a replica, through the poller and channel_metrics;
    the source's newest GTIDs, read a moment before the replica, are not among them."""
    _, poller = replay(load("mysql80_replica.json"))
    snapshot = poller.poll()
    channel = snapshot.channel("")
    assert channel is not None
    source_uuid = "b7e2c1d4-6f3a-11ee-8a21-0a58a9feac02"
    view = SourceView(
        executed=f"{source_uuid}:1-3821800",
        server_id=201,
        source_rate=None,
        clock_offset_s=None,
        server_uuid=source_uuid,
    )
    found = channel_metrics(channel, snapshot, view, ChannelState())
    assert (found.errant_trx, found.errant_gtids) == (
        12,
        "c4d9e0f1-6f3b-11ee-9b44-0a58a9feac03:1-12",
    )
