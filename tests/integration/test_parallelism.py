"""The source's binlog windows on the real lab (MariaDB): marked, read after writes from
several sessions, grouped by group commit and simulated; the API's answer."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import select

from lagscope.db import make_engine, make_session_factory
from lagscope.history.parallelism import parallelism
from lagscope.ingest.commit_samples import sample_all
from lagscope.inventory import instances as inventory
from lagscope.models import CommitSample
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .api_stack import api_server

pytestmark = pytest.mark.integration

SECRET = "parallelism-test-secret-5d2c8e1b7a4f9063-Rw"
WRITERS, EACH = 8, 40


def write_concurrently(lab) -> None:
    conn = lab.connect("source")
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS parallelism_test")
        cur.execute(
            "CREATE TABLE IF NOT EXISTS parallelism_test.t"
            " (id INT AUTO_INCREMENT PRIMARY KEY, writer INT, v VARCHAR(64))"
        )
    conn.close()

    def writer(n: int) -> None:
        own = lab.connect("source")
        try:
            with own.cursor() as cur:
                for i in range(EACH):
                    cur.execute(
                        "INSERT INTO parallelism_test.t (writer, v) VALUES (%s, %s)", (n, str(i))
                    )
                    own.commit()
        finally:
            own.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)


def test_a_window_after_concurrent_writes_is_grouped_and_simulated(lab, tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    sessions = make_session_factory(make_engine(url))
    box = store_box(sessions, SECRET)
    user, password = lab.credentials.monitor
    with sessions() as s, s.begin():
        cluster = inventory.create_cluster(s, "lab")
        server = lab.server("source")
        source = inventory.add_instance(
            s, box, cluster, "source", server.host, server.port, user, password, "source"
        )
        source.flavor = "mariadb"  # what the first poll would have set
        cluster_id = cluster.id

    assert sample_all(sessions, box, None, time.time()) == 0  # the first run only marks
    write_concurrently(lab)
    assert sample_all(sessions, box, None, time.time()) == 1
    with sessions() as s:
        window = s.scalars(select(CommitSample).where(CommitSample.transactions > 0)).one()
        found = parallelism(s, cluster_id)
    assert window.transactions >= WRITERS * EACH * 0.5  # the window holds most of them
    assert found.source == "source" and found.transactions == window.transactions
    assert found.conservative[1] == 1.0 and found.optimistic[1] == 1.0
    assert found.optimistic[4] >= found.conservative[4] >= 1.0
    assert found.optimistic[4] > 3.0  # the bound: no parents, near-equal sizes
    print(
        f"\n{found.transactions} transactions in {found.groups} group commits"
        f" (mean {found.mean_group_size:.2f}); conservative 2/4/8 workers:"
        f" {found.conservative[2]:.2f} {found.conservative[4]:.2f} {found.conservative[8]:.2f}"
    )

    with api_server(url, secret_key=SECRET) as api, api.client() as client:
        answer = client.get(f"/api/v1/clusters/{cluster_id}/parallelism")
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert [p["workers"] for p in body["conservative"]] == list(range(1, 17))
        assert body["transactions"] == found.transactions
        assert client.get("/api/v1/clusters/999/parallelism").status_code == 404
