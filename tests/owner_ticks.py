"""Ticks written as a poll owner writes them, and the figures it hands to its alert judge.

The cluster is loaded once and detached (``ingest/tick_rows.detach``), as the owner keeps it
between ticks; a test sets the tick's columns on it in memory (``last_error``,
``clock_offset_s``, a channel's ``last_io_errno`` …), and :meth:`OwnerTicks.tick` inserts the
tick's ``samples`` and ``instance_samples`` rows with Core, writes the changed columns of the
graph with ``TickRows`` (through a ``TickWrites``) and returns what the owner knows of the
tick: the cluster as left in memory and the rows as written (floats not rounded to the store's
scale).

    ticks = OwnerTicks(sessions, cluster_id)
    figures = ticks.tick(at, samples={channel_id: {"lag_s": 12.5}}, polled={instance_id: {}})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session, joinedload, sessionmaker

from lagscope.alerts.tick_figures import TickFigures
from lagscope.analysis.codes import Verdict
from lagscope.ingest import tick_rows
from lagscope.ingest.tick_writes import TickWrites
from lagscope.models import Base, Cluster, Instance, InstanceSample, Sample

# A channel answering with nothing behind, and a server answering: what a value left out is.
ANSWERED: dict[str, Any] = {
    **dict.fromkeys(Sample.__table__.columns.keys(), None),
    "verdict": 0,
    "lag_s": 0.0,
    "trx_behind": 0,
    "not_received": 0,
    "received_not_applied": 0,
    "io_state": 1,
    "sql_running": True,
    "disagreement": False,
    "errant_trx": 0,
}
# A channel on a server that did not answer: no figure but the verdict.
UNREACHABLE: dict[str, Any] = {
    **dict.fromkeys(ANSWERED),
    "verdict": int(Verdict.UNREACHABLE),
    "disagreement": False,
}
REACHABLE: dict[str, Any] = {
    **dict.fromkeys(InstanceSample.__table__.columns.keys(), None),
    "reachable": True,
}


def detached_cluster(session: Session, cluster_id: int) -> tuple[Cluster, tick_rows.TickRows]:
    """The cluster with its instances and channels, out of the session, as a tick loads it."""
    cluster = (
        session.execute(
            select(Cluster)
            .where(Cluster.id == cluster_id)
            .options(joinedload(Cluster.instances).joinedload(Instance.channels))
        )
        .unique()
        .scalar_one()
    )
    return cluster, tick_rows.detach(session, cluster)


class OwnerTicks:
    def __init__(self, sessions: sessionmaker[Session], cluster_id: int) -> None:
        self.sessions = sessions
        with sessions() as session:
            self.cluster, self.rows = detached_cluster(session, cluster_id)

    def tick(
        self,
        at: datetime,
        samples: Mapping[int, Mapping[str, Any]],
        polled: Mapping[int, Mapping[str, Any]],
        also: Iterable[Base] = (),
    ) -> TickFigures:
        """One tick at ``at``: a sample row per channel id in ``samples`` and an instance sample
        per instance id in ``polled`` (each over :data:`ANSWERED` / :data:`REACHABLE`), the
        polled instances' ``last_polled_at`` set, ``also`` added (e.g. a ParamChange)."""
        sample_rows = {
            cid: {**ANSWERED, **values, "channel_id": cid, "ts": at}
            for cid, values in samples.items()
        }
        polled_rows = {
            iid: {**REACHABLE, **values, "instance_id": iid, "ts": at}
            for iid, values in polled.items()
        }
        for instance in self.cluster.instances:
            if instance.id in polled:
                instance.last_polled_at = at
        with self.sessions() as session, session.begin():
            if sample_rows:
                session.execute(insert(Sample.__table__), list(sample_rows.values()))
            if polled_rows:
                session.execute(insert(InstanceSample.__table__), list(polled_rows.values()))
            session.add_all(also)
            writes = TickWrites()
            self.rows.collect(writes)
            writes.send(session.connection())
        return TickFigures(self.cluster, sample_rows, polled_rows)
