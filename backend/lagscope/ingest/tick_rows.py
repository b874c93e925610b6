"""The tick's own rows (cluster, instances, channels), written without the ORM's unit of work.

A tick loads its cluster with the instances and channels, changes a dozen columns on each and
writes them back. Through the session's unit of work that cost as much CPU as reading the
servers (history per attribute, a flush plan per object: ``bench/profile_tick.py``). So the
tick detaches the loaded rows at once (:func:`detach`): the code that works out the tick goes on
setting attributes as before, nothing autoflushes them, and :meth:`TickRows.collect` compares
each row with its values as loaded (models/loaded.py: what the unit of work would have written)
and hands the changed columns to the batch's writes (tick_writes.py): one executemany
``UPDATE … WHERE id = ?`` per table and set of changed columns for the whole batch.

A channel seen for the first time is inserted through the session (its id is needed for its
samples) and then tracked like the others (:meth:`TickRows.add_channels`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from lagscope.ingest.tick_writes import TickWrites
from lagscope.models import Channel, Cluster, Instance
from lagscope.models.loaded import loaded_values, take_changes

Row = Cluster | Instance | Channel
_COLUMNS: dict[type[Row], tuple[str, ...]] = {
    model: tuple(c.key for c in model.__table__.columns if c.key != "id")
    for model in (Cluster, Instance, Channel)
}


class TickRows:
    """The loaded rows of one cluster with their values as loaded."""

    def __init__(self) -> None:
        self._loaded: list[tuple[Row, dict[str, Any]]] = []

    def track(self, rows: Iterable[Row]) -> None:
        self._loaded.extend((row, loaded_values(row, _COLUMNS[type(row)])) for row in rows)

    def add_channels(self, session: Session, instance: Instance, new: Sequence[Channel]) -> None:
        """Insert channels found on a detached instance: their ids come from the store, and
        the instance's list gets them without the ORM re-attaching the instance."""
        for channel in new:
            channel.instance_id = instance.id
        session.add_all(new)
        session.flush()
        for channel in new:
            session.expunge(channel)
        channels = sorted([*instance.channels, *new], key=lambda c: c.name)
        set_committed_value(instance, "channels", channels)
        for channel in new:
            set_committed_value(channel, "instance", instance)
        self.track(new)

    def collect(self, writes: TickWrites) -> int:
        """Hand the changed columns to ``writes`` (sent with the batch) and take the values now
        as the values loaded; returns the number of rows changed."""
        changed_rows = 0
        for row, before in self._loaded:
            changed = take_changes(row, before)
            if changed:
                table = type(row).__table__
                assert isinstance(table, Table)
                writes.update(table, tuple(sorted(changed)), {"_pk": row.id, **changed})
                changed_rows += 1
        return changed_rows


def detach(session: Session, cluster: Cluster) -> TickRows:
    """Take the cluster, its instances and their channels out of the session (their changes
    are written by the returned :class:`TickRows`, not flushed)."""
    rows = TickRows()
    rows.track([cluster])
    rows.track(cluster.instances)
    rows.track(c for i in cluster.instances for c in i.channels)
    session.expunge(cluster)  # cascades to the instances and channels
    return rows
