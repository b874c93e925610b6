"""Each GTID set of a tick is parsed once: the snapshot keeps what it parsed.

A tick reads the source's executed set for its rate, its timeline history and every replica's
counts and timeline, and each replica's executed set for its rate, counts and timeline; a large
MySQL set costs milliseconds to parse. ``GtidSet.parse`` / ``GtidPos.parse`` are wrapped to count
the parses of one ``record_tick`` for a source and two replicas (store: in-memory SQLite).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session

from lagscope.collectors.flavor import ServerFlavor
from lagscope.collectors.gtid import GtidPos, GtidSet, GtidTexts, count_gtids
from lagscope.collectors.snapshot import (
    ChannelStatus,
    InstanceSnapshot,
    IoState,
)
from lagscope.ingest.reader import PollResult
from lagscope.ingest.recording import record_tick
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster
from lagscope.security.secret_box import SecretBox
from tests.factories import memory_session
from tests.factories.snapshots import instance_snapshot

T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
# (flavor, source set, per replica: (retrieved, executed)) in each product's own text.
CASES = {
    "mysql": (
        ServerFlavor("mysql", (8, 4, 3)),
        f"{U}:1-1000",
        [(f"{U}:1-990", f"{U}:1-900"), (f"{U}:1-980", f"{U}:1-800")],
    ),
    "mariadb": (
        ServerFlavor("mariadb", (10, 11, 9)),
        "0-1-1000",
        [("0-1-990", "0-1-900"), ("0-1-980", "0-1-800")],
    ),
}


@pytest.fixture
def session() -> Iterator[Session]:
    yield from memory_session()


def _snapshot(flavor: ServerFlavor, second: float, server_id: int, executed: str,
              channels: tuple[ChannelStatus, ...] = ()) -> InstanceSnapshot:  # fmt: skip
    return instance_snapshot(T0, second, server_id, executed, channels, flavor=flavor)


def _tick(session: Session, cluster: Cluster, product: str, second: float) -> None:
    flavor, source_set, replicas = CASES[product]
    ids = [i.id for i in cluster.instances]
    readings = [PollResult(ids[0], second, _snapshot(flavor, second, 1, source_set))]
    for n, (retrieved, executed) in enumerate(replicas, start=2):
        status = ChannelStatus(
            "", IoState.YES, True, 3, source_server_id=1,
            retrieved_gtids=retrieved, executed_gtids=executed, relay_log_space=4096,
        )  # fmt: skip
        # The replica's own server-wide set: MariaDB's binlog position differs from the channel's
        # slave position; a MySQL replica's @@gtid_executed is its Executed_Gtid_Set.
        own = executed if product == "mysql" else f"0-{n}-5"
        readings.append(
            PollResult(ids[n - 1], second, _snapshot(flavor, second, n, own, (status,)))
        )
    record_tick(session, cluster, readings)


@pytest.mark.parametrize("product", sorted(CASES))
def test_every_gtid_set_is_parsed_once_per_tick(
    session: Session, product: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
    cluster = inventory.create_cluster(session, "c")
    for name, port, role in (
        ("src", 3306, "source"),
        ("r1", 3307, "replica"),
        ("r2", 3308, "replica"),
    ):
        inventory.add_instance(session, box, cluster, name, "127.0.0.1", port, "u", "pw", role)
    session.flush()
    _tick(session, cluster, product, 0.0)  # the first tick has no rates yet

    parses: Counter[str] = Counter()
    for kind in (GtidSet, GtidPos):
        original = kind.parse.__func__  # type: ignore[attr-defined]

        def counting(cls: type, text: str, original=original) -> object:  # type: ignore[no-untyped-def]
            parses[text] += 1
            return original(cls, text)

        monkeypatch.setattr(kind, "parse", classmethod(counting))
    _tick(session, cluster, product, 1.0)

    _, source_set, replicas = CASES[product]
    print(f"{product}: {dict(parses)}")
    assert parses[source_set] == 1, "the source's executed set"
    for retrieved, executed in replicas:
        assert parses[retrieved] == 1 and parses[executed] == 1, "a replica's sets"
    assert set(parses.values()) == {1}


def test_a_text_that_does_not_parse_is_refused_each_time_and_parsed_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    original = GtidSet.parse.__func__  # type: ignore[attr-defined]

    def counting(cls: type, text: str) -> object:
        calls.append(text)
        return original(cls, text)

    monkeypatch.setattr(GtidSet, "parse", classmethod(counting))
    texts = GtidTexts()
    for _ in range(2):
        with pytest.raises(ValueError, match="garbage"):
            texts.parse("mysql", "garbage")
    assert texts.parse("mysql", f"{U}:1-5").count() == 5
    assert calls == ["garbage", f"{U}:1-5"]


def test_sets_of_different_products_are_not_counted_together() -> None:
    with pytest.raises(ValueError, match="different products"):
        count_gtids(GtidSet.parse(f"{U}:1-5"), GtidPos.parse("0-1-5"), GtidPos.parse("0-1-4"))
    counts = count_gtids(GtidPos.parse("0-1-9"), GtidPos.parse("0-1-8"), GtidPos.parse("0-1-5"))
    assert (counts.trx_behind, counts.not_received, counts.received_not_applied) == (4, 1, 3)
