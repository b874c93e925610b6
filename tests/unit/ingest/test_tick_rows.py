"""The tick's rows written without the unit of work (ingest/tick_rows.py): only changed columns,
one executemany per table and set of columns (for a whole batch of ticks: tick_writes.py), a
new channel stored and tracked, and nothing of the detached rows flushed by the session behind
the tracker's back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, event, select
from sqlalchemy.orm import Session, joinedload

from lagscope.ingest.tick_rows import TickRows, detach
from lagscope.ingest.tick_writes import TickWrites
from lagscope.inventory import instances as inventory
from lagscope.models import Base, Channel, Cluster, Instance
from lagscope.security.secret_box import SecretBox

T0 = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


@pytest.fixture
def session() -> Iterator[Session]:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
        cluster = inventory.create_cluster(session, "c")
        for name, port, role in (("src", 3306, "source"), ("r1", 3307, "replica")):
            inventory.add_instance(session, box, cluster, name, "127.0.0.1", port, "u", "pw", role)
        session.flush()
        replica = cluster.instances[1]
        replica.channels.append(Channel(name="", first_seen_at=T0))
        session.commit()
    with Session(engine) as session:
        yield session
    engine.dispose()


def load(session: Session) -> Cluster:
    return (
        session.execute(
            select(Cluster).options(joinedload(Cluster.instances).joinedload(Instance.channels))
        )
        .unique()
        .scalar_one()
    )


def write(rows: TickRows, session: Session) -> int:
    """What a batch of one tick does: gather the changes, then send them."""
    writes = TickWrites()
    changed = rows.collect(writes)
    writes.send(session.connection())
    return changed


def updates(session: Session) -> list[tuple[str, int]]:
    """(statement, parameter sets) of every UPDATE the session's engine runs from now on."""
    seen: list[tuple[str, int]] = []

    def note(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.startswith("UPDATE"):
            seen.append((statement, len(parameters) if executemany else 1))

    event.listen(session.get_bind(), "before_cursor_execute", note)
    return seen


def test_only_changed_columns_are_written_once_per_table_and_column_set(session: Session):
    cluster = load(session)
    rows = detach(session, cluster)
    seen = updates(session)
    for instance in cluster.instances:
        instance.last_error = f"{instance.name} failed"
        instance.port = instance.port  # the same value: not a change
    cluster.instances[1].channels[0].verdict = 3
    cluster.last_tick_s = 0.25
    session.flush()  # the detached rows are not the session's to flush
    assert seen == []
    assert write(rows, session) == 4
    assert len(seen) == 3  # clusters, instances (2 rows, one executemany), channels
    instance_update = next(s for s in seen if "instances" in s[0])
    assert instance_update[1] == 2
    assert "last_error" in instance_update[0] and "port" not in instance_update[0]
    session.commit()
    session.expunge_all()
    again = load(session)
    assert [i.last_error for i in again.instances] == ["src failed", "r1 failed"]
    assert again.instances[1].channels[0].verdict == 3
    assert again.last_tick_s == 0.25
    seen.clear()
    assert write(rows, session) == 0  # written values are the new baseline
    assert seen == []


def test_a_new_channel_gets_its_id_and_its_changes_are_written(session: Session):
    cluster = load(session)
    rows = detach(session, cluster)
    replica = cluster.instances[1]
    new = Channel(name="b", first_seen_at=T0)
    rows.add_channels(session, replica, [new])
    assert new.id is not None
    assert [c.name for c in replica.channels] == ["", "b"]
    assert new.instance is replica
    new.recent_classes = "1,1"
    replica.last_error = None
    assert write(rows, session) == 1
    session.commit()
    session.expunge_all()
    stored = session.scalars(select(Channel).where(Channel.name == "b")).one()
    assert stored.recent_classes == "1,1"
    assert stored.instance_id == replica.id


def test_json_values_compare_by_value(session: Session):
    cluster = load(session)
    rows = detach(session, cluster)
    channel = cluster.instances[1].channels[0]
    channel.current_causes = list(channel.current_causes or [])  # a new object, equal value
    assert write(rows, session) == 0
    channel.current_causes = [{"cause": 1, "since": 1.0}]
    assert write(rows, session) == 1


def test_a_batch_of_clusters_sends_one_update_per_table_and_column_set(session: Session):
    box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
    other = inventory.create_cluster(session, "d")
    inventory.add_instance(session, box, other, "src", "127.0.0.1", 3316, "u", "pw", "source")
    session.commit()
    clusters = (
        session.execute(
            select(Cluster).options(joinedload(Cluster.instances).joinedload(Instance.channels))
        )
        .unique()
        .scalars()
        .all()
    )
    tracked = [detach(session, c) for c in clusters]
    seen = updates(session)
    for cluster in clusters:
        cluster.last_tick_s = 0.5
        for instance in cluster.instances:
            instance.last_error = "x"
    writes = TickWrites()
    assert sum(rows.collect(writes) for rows in tracked) == 5  # 2 clusters, 3 instances
    assert seen == []  # nothing sent before the batch's end
    writes.send(session.connection())
    assert sorted(n for _, n in seen) == [2, 3]  # one executemany per table, across clusters
    assert writes.statements == 2 and writes.rows == 5
    session.commit()
    assert set(session.scalars(select(Instance.last_error))) == {"x"}
