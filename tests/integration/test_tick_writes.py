"""A batch of ticks on the live lab and a SQLite store, as a poll owner runs it: the rows the
ticks append go out as one statement per table for the whole batch (ingest/tick_writes.py), and
what the ticks appended last is remembered (ingest/tick_memory.py), so from the second tick on
nothing is read back of it; what is stored is what a tick without that memory stores."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import TickOptions
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.ingest.tick_cache import TickCache
from lagscope.inventory import instances as inventory
from lagscope.lab import Lab
from lagscope.models import ApplierWorkerState, Instance, InstanceSample, SourceProgress
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

pytestmark = pytest.mark.integration

SECRET = "tick-writes-test-secret-4f1a8c2e9b7d3065-Qx"
TABLES = ("samples", "instance_samples", "source_progress", "applier_worker_samples")


def test_a_batch_sends_one_insert_per_table_and_reads_nothing_back(
    lab: Lab, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'writes.db'}"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    ids = []
    with sessions() as s, s.begin():
        for n in range(2):
            cluster = inventory.create_cluster(s, f"batch-{n}")
            for name in ("source", "replica1", "replica2"):
                server = lab.server(name)
                role = "source" if name == "source" else "replica"
                inventory.add_instance(
                    s, box, cluster, name, server.host, server.port, user, password, role
                )
            ids.append(cluster.id)

    @contextmanager
    def transaction() -> Iterator[Session]:
        with sessions() as session, session.begin():
            yield session

    statements: list[str] = []

    def note(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(" ".join(statement.split()))

    reader = ClusterReader(max_threads=8)
    cache = TickCache()
    options = TickOptions()
    try:
        event.listen(engine, "before_cursor_execute", note)
        per_tick: list[list[str]] = []
        for _ in range(4):
            statements.clear()
            assert set(poll_clusters(transaction, box, reader, ids, options, cache)) == set(ids)
            per_tick.append(list(statements))
        event.remove(engine, "before_cursor_execute", note)

        for seen in per_tick:
            inserts = Counter(
                table for s in seen for table in TABLES if s.startswith(f"INSERT INTO {table} ")
            )
            # Two clusters of three servers, one statement per table for the batch.
            assert inserts["samples"] == 1 and inserts["instance_samples"] == 1, inserts
            assert inserts["source_progress"] == 1, inserts
        for seen in per_tick[1:]:
            assert not [s for s in seen if "FROM source_progress" in s and "DESC" in s], (
                "the newest source progress comes from memory after the first tick"
            )
            assert not [s for s in seen if s.startswith("SELECT") and "FROM applier_workers" in s]

        with sessions() as s:
            # One point per tick and stream of each source, none lost or doubled.
            points = s.execute(
                select(SourceProgress.instance_id, SourceProgress.stream, func.count()).group_by(
                    SourceProgress.instance_id, SourceProgress.stream
                )
            ).all()
            assert points and {n for _, _, n in points} == {4}
            polls = s.scalar(select(func.count()).select_from(InstanceSample))
            assert polls == 4 * 6
            newest = dict(
                s.execute(
                    select(InstanceSample.instance_id, func.max(InstanceSample.ts)).group_by(
                        InstanceSample.instance_id
                    )
                ).all()
            )
            replicas = s.scalars(select(Instance.id).where(Instance.role == "replica")).all()
            states = {w.instance_id: w for w in s.scalars(select(ApplierWorkerState))}
        # Every replica's newest worker reading is this tick's (written as an update from memory).
        for replica in replicas:
            state = states[replica]
            assert state.problem is not None or state.read_at == newest[replica]

        # A cluster reloaded (its memory empty) reads the store and carries on the same series.
        cache.forget(ids)
        poll_clusters(transaction, box, reader, ids, options, cache)
        with sessions() as s:
            counts = s.execute(
                select(func.count())
                .select_from(SourceProgress)
                .group_by(SourceProgress.instance_id, SourceProgress.stream)
            ).scalars()
            assert set(counts) == {5}
    finally:
        reader.close()
        engine.dispose()
