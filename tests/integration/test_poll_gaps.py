"""A tick that finds a hole in its cluster's polling records it with its reason, and the API
lists it: the state a previous tick (or a dropped one) left in the store is set as it would be,
the tick itself is real (the lab's servers, a real store, the HTTP API)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from sqlalchemy import select, update

from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import note_expired_tick, poll_cluster
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster, PollGap
from lagscope.security.secret_box import store_box

from .api_stack import SECRET, api_server, sqlite_url


def _at(seconds_ago: float) -> datetime:
    return datetime.fromtimestamp(time.time() - seconds_ago, UTC)


def test_a_hole_in_polling_is_recorded_with_why(lab, tmp_path):
    user, password = lab.credentials.monitor
    with api_server(sqlite_url(tmp_path)) as api:
        box = store_box(api.sessions, SECRET)
        with api.sessions() as session, session.begin():
            cluster = inventory.create_cluster(session, "gappy", poll_interval_s=1.0)
            for name in ("source", "replica1"):
                server = lab.server(name)
                role = "source" if name == "source" else "replica"
                inventory.add_instance(
                    session, box, cluster, name, server.host, server.port, user, password, role
                )
            cluster_id = cluster.id
        reader = ClusterReader(max_threads=4)

        def tick() -> list[PollGap]:
            with api.sessions() as session, session.begin():
                assert poll_cluster(session, box, reader, cluster_id, worker="test:1") is not None
            with api.sessions() as session:
                return list(session.scalars(select(PollGap).order_by(PollGap.id)))

        def set_last_tick(seconds_ago: float, took_s: float = 0.05) -> None:
            with api.sessions() as session, session.begin():
                session.execute(
                    update(Cluster)
                    .where(Cluster.id == cluster_id)
                    .values(last_tick_at=_at(seconds_ago), last_tick_s=took_s)
                )

        try:
            assert tick() == []  # the first tick: nothing before it
            assert tick() == []  # right after it: no hole
            with api.sessions() as session:
                polled = session.get(Cluster, cluster_id)
                assert polled is not None and polled.last_tick_by == "test:1"
                assert polled.last_tick_s is not None and polled.last_tick_s > 0

            set_last_tick(5.0)  # a worker took the next ticks and died with them
            gaps = tick()
            assert [g.reason for g in gaps] == ["not_polled"]
            assert 3 <= gaps[0].missed <= 5

            set_last_tick(4.0)  # ticks expired in the queue meanwhile
            with api.sessions() as session, session.begin():
                note_expired_tick(session, cluster_id, time.time() - 2.0)
            assert [g.reason for g in tick()][-1] == "expired"

            set_last_tick(4.0, took_s=3.5)  # a tick outlasted its interval
            assert [g.reason for g in tick()][-1] == "slow"

            with api.sessions() as session, session.begin():  # a chosen pause is no hole
                inventory.update_cluster(
                    session, box, session.get(Cluster, cluster_id), {"enabled": False}
                )
            with api.sessions() as session, session.begin():
                inventory.update_cluster(
                    session, box, session.get(Cluster, cluster_id), {"enabled": True}
                )
            assert len(tick()) == 3

            with api.client() as c:
                listed = c.get(f"/api/v1/clusters/{cluster_id}/poll-gaps")
                assert listed.status_code == 200, listed.text
                body = listed.json()["gaps"]
                assert [g["reason"] for g in body] == ["slow", "expired", "not_polled"]
                assert all(g["detail"] and g["missed"] >= 1 for g in body)
                assert c.get("/api/v1/clusters/999999/poll-gaps").status_code == 404
                bad = c.get(f"/api/v1/clusters/{cluster_id}/poll-gaps?from=yesterday")
                assert bad.status_code == 422
        finally:
            reader.close()
