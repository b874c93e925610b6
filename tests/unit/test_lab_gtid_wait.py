"""The lab's catch-up wait compares MariaDB GTID positions per domain by sequence number."""

from lagscope.lab.topology import _gtid_reached, _gtid_set


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
