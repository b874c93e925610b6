"""The status names durability shortcuts per instance: the redo log disabled, doublewrite off
(the explorer warns about them). Hand-made rows on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import insert

from lagscope.models import InstanceSample, ParamValue
from tests.factories import make_cluster

from .api_stack import api_server, sqlite_url

pytestmark = pytest.mark.integration


def test_status_says_redo_log_and_doublewrite(tmp_path):
    now = datetime.now(UTC)
    with api_server(sqlite_url(tmp_path)) as api:
        with api.sessions() as session, session.begin():
            servers = [("risky", 3307), ("plain", 3308)]
            cluster, named = make_cluster(session, "durability", servers, password="")
            risky, plain = named["risky"], named["plain"]
            session.flush()
            session.execute(
                insert(InstanceSample),
                [
                    {
                        "instance_id": risky.id,
                        "ts": now,
                        "reachable": True,
                        "redo_log_enabled": False,
                    }
                ],
            )
            session.execute(
                insert(ParamValue),
                [{"instance_id": risky.id, "name": "innodb_doublewrite", "value": "OFF",
                  "since": now}],
            )  # fmt: skip
            ids = cluster.id, risky.id, plain.id
        with api.client() as c:
            body = c.get(f"/api/v1/clusters/{ids[0]}/status").json()
    by_id = {i["id"]: i for i in body["instances"]}
    assert by_id[ids[1]]["redo_log_enabled"] is False
    assert by_id[ids[1]]["doublewrite"] == "OFF"
    assert by_id[ids[2]]["redo_log_enabled"] is None
    assert by_id[ids[2]]["doublewrite"] is None
