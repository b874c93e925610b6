"""A stopped replica still shows how far behind it is, on the live lab.

The real pipeline polls the MariaDB lab with no heartbeat (the hardest case: the server's own
Seconds_Behind_Master is NULL while stopped, MariaDB has no applier timestamp), the source keeps
writing, and ``STOP SLAVE`` on replica1: the API's status must show a lag that grows with the
source's timeline — never 0, never null — and the reason (verdict "stopped", threads off).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lagscope.demo.load import WriteLoad

from .api_stack import ApiServer
from .pipeline_stack import Pipeline, start_pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pipeline(lab, tmp_path_factory) -> Iterator[Pipeline]:
    workdir = tmp_path_factory.mktemp("stopped-lag")
    with start_pipeline(lab, workdir, heartbeat=False) as started:
        yield started


@pytest.fixture(scope="module")
def api_store(pipeline: Pipeline) -> str:
    return pipeline.url


def replica1(api: ApiServer, cluster_id: int) -> dict[str, Any]:
    with api.client() as c:
        response = c.get(f"/api/v1/clusters/{cluster_id}/status")
    assert response.status_code == 200, response.text
    (channel,) = [ch for ch in response.json()["channels"] if ch["instance"] == "replica1"]
    return channel


@pytest.mark.timeout(300)
def test_a_stopped_replica_shows_its_lag_growing_and_why(lab, pipeline: Pipeline, api: ApiServer):
    lab.wait_caught_up(timeout_s=60)
    load = WriteLoad(lambda: lab.connect("source"), threads=1, target_tps=50)
    replica = lab.connect("replica1")
    try:
        load.start()
        wait_until(
            lambda: replica1(api, pipeline.cluster_id)["verdict"] == "caught_up",
            timeout_s=60,
            interval_s=1.0,
            message="replica1 caught up under the load before the stop",
        )
        with replica.cursor() as cur:
            cur.execute("STOP SLAVE")
        first = wait_until(
            lambda: (
                ch
                if (ch := replica1(api, pipeline.cluster_id))["verdict"] == "stopped"
                and (ch["lag_s"] or 0) >= 5
                else None
            ),
            timeout_s=90,
            interval_s=1.0,
            message="replica1 shown stopped and at least 5 s behind",
        )
        later = wait_until(
            lambda: (
                ch
                if (ch := replica1(api, pipeline.cluster_id))["lag_s"] >= first["lag_s"] + 5
                else None
            ),
            timeout_s=60,
            interval_s=1.0,
            message="the stopped replica's lag growing with the source's timeline",
        )
    finally:
        with replica.cursor() as cur:
            cur.execute("START SLAVE")
        load.stop()
        replica.close()
    print(
        f"stopped replica1: lag {first['lag_s']} s then {later['lag_s']} s ({later['lag_source']})"
    )
    for shown in (first, later):
        assert shown["verdict"] == "stopped", shown
        assert shown["sql_running"] is False and shown["io_running"] is False, shown
        assert shown["seconds_behind_source"] is None  # what the server itself says: NULL
        assert shown["lag_source"] == "source_timeline", shown
        assert shown["lag_s"] is not None and shown["lag_s"] > 0, shown
