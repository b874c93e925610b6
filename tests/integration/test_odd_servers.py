"""One odd server never blinds the others: fake MariaDB servers playing the odd-answer corpus
(tests/unit/fakes/odd_mysql.py) are polled in the same ticks as the real lab, through the real tick
path (ingest/tick_batch.poll_clusters, a real store). The lab's samples never stop, no tick
raises, the odd server's reading fails with a clear state; and the connection test and
discovery answer 502 with the reason, never 500.

One odd server sits in the lab's own cluster (as a replica), another is the source of a
cluster of its own batched with it, the shape that lost every sample of the batch before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import TickOptions
from lagscope.ingest.tick_batch import poll_clusters
from lagscope.inventory import instances as inventory
from lagscope.models import Instance, InstanceSample
from lagscope.security.secret_box import SecretBox, store_box
from tests.unit.fakes.odd_mysql import BY_NAME, CORPUS, OddAnswer, OddMySQL

from .api_stack import SECRET, ApiServer, api_server, sqlite_url

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Long enough that a lab poll on the shared 2-core machine meets the tick's deadline (0.8 of
# the interval, at most connect + read timeout): a lost lab sample is then the odd server's.
POLL_INTERVAL_S = 5.0
LAB = ("source", "replica1", "replica2")


@dataclass
class Fleet:
    api: ApiServer
    box: SecretBox
    lab_ids: list[int]
    odd_ids: list[int]
    cluster_ids: list[int]
    fakes: list[OddMySQL]
    reader: ClusterReader = field(default_factory=lambda: ClusterReader(max_threads=8))
    figures: dict[str, int] = field(default_factory=lambda: {"answers": 0, "ticks": 0, "lost": 0})
    tried: set[str] = field(default_factory=set)


@contextmanager
def _fleet(tmp_path, lab) -> Iterator[Fleet]:
    user, password = lab.credentials.monitor
    fakes = [OddMySQL(CORPUS[0]).__enter__(), OddMySQL(CORPUS[0]).__enter__()]
    try:
        with api_server(sqlite_url(tmp_path), probe_per_minute=1000) as api:
            box = store_box(api.sessions, SECRET)
            with api.sessions() as session, session.begin():
                real = inventory.create_cluster(session, "lab", POLL_INTERVAL_S)
                lab_ids = []
                for name in LAB:
                    server = lab.server(name)
                    role = "source" if name == "source" else "replica"
                    lab_ids.append(
                        inventory.add_instance(
                            session, box, real, name, server.host, server.port, user, password,
                            role,
                        ).id
                    )  # fmt: skip
                odd_replica = inventory.add_instance(
                    session, box, real, "odd", "127.0.0.1", fakes[0].port, "x", "pw", "replica"
                )
                alone = inventory.create_cluster(session, "odd-alone", POLL_INTERVAL_S)
                odd_source = inventory.add_instance(
                    session, box, alone, "odd-source", "127.0.0.1", fakes[1].port, "x", "pw",
                    "source",
                )  # fmt: skip
                session.flush()
                ids = [real.id, alone.id]
                odd = [odd_replica.id, odd_source.id]
            yield Fleet(api, box, lab_ids, odd, ids, fakes)
    finally:
        for fake in fakes:
            fake.stop()


@contextmanager
def _transactions(api: ApiServer) -> Iterator[Session]:
    with api.sessions() as session, session.begin():
        yield session


def _lab_samples(api: ApiServer, ids: list[int]) -> int:
    with api.sessions() as session:
        count = session.scalar(
            select(func.count())
            .select_from(InstanceSample)
            .where(InstanceSample.instance_id.in_(ids), InstanceSample.reachable.is_(True))
        )
    return int(count or 0)


def _last_errors(api: ApiServer, ids: list[int]) -> list[str | None]:
    with api.sessions() as session:
        return [session.get_one(Instance, i).last_error for i in ids]


def _tick(fleet: Fleet, reader: ClusterReader | None, answer: OddAnswer) -> None:
    reader = reader or fleet.reader
    for fake in fleet.fakes:
        fake.answer = answer
    before = _lab_samples(fleet.api, fleet.lab_ids)
    options = TickOptions(worker="test:odd", read_timeout_s=2.0)
    done = poll_clusters(
        lambda: _transactions(fleet.api), fleet.box, reader, fleet.cluster_ids, options
    )
    assert sorted(done) == sorted(fleet.cluster_ids), answer.name
    got = _lab_samples(fleet.api, fleet.lab_ids) - before
    fleet.figures["ticks"] += 1
    fleet.figures["answers"] += len(fleet.fakes)
    fleet.figures["lost"] += len(fleet.lab_ids) - got
    fleet.tried.add(answer.name)
    assert got == len(fleet.lab_ids), f"{answer.name}: {got} lab samples of {len(fleet.lab_ids)}"
    errors = _last_errors(fleet.api, fleet.odd_ids)
    busy = "the previous poll has not returned yet"
    for error in errors:
        if answer.expect == "unexpected" and error and busy not in error:
            assert "unexpected answer: " in error, (answer.name, error)
        elif answer.expect == "unreachable":
            assert error and ("unreachable" in error or "Lost connection" in error), error
        if error:
            assert error.isprintable(), (answer.name, error)


def _shown_as_unexpected(fleet: Fleet) -> None:
    """The odd servers' state where an operator looks: the instance's last error in the API,
    and /metrics' lagscope_poll_error with its kind (the lab's servers have none)."""
    _tick(fleet, None, BY_NAME["no_row"])
    with fleet.api.client() as c:
        for instance_id in fleet.odd_ids:
            shown = c.get(f"/api/v1/instances/{instance_id}").json()
            assert "unexpected answer: server_state: " in shown["last_error"], shown
        metrics = c.get("/metrics")
    assert metrics.status_code == 200, metrics.text
    failing = {
        (s.labels["server"], s.labels["kind"])
        for family in text_string_to_metric_families(metrics.text)
        for s in family.samples
        if s.name == "lagscope_poll_error"
    }
    assert failing == {("odd", "UnexpectedAnswer"), ("odd-source", "UnexpectedAnswer")}


def test_odd_servers_in_ticks_with_the_lab_cost_the_lab_no_sample(lab, tmp_path):
    with _fleet(tmp_path, lab) as fleet:
        reader = fleet.reader
        try:
            # Every answer of the corpus once, in order; then hypothesis mixes them.
            for answer in CORPUS:
                _tick(fleet, reader, answer)
                if answer.expect == "unexpected":
                    errors = _last_errors(fleet.api, fleet.odd_ids)
                    assert all(e and "unexpected answer: " in e for e in errors), errors
            _shown_as_unexpected(fleet)

            @settings(
                max_examples=6,
                deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture],
            )
            @given(st.lists(st.sampled_from(CORPUS), min_size=2, max_size=4))
            def mixed(answers: list[OddAnswer]) -> None:
                for answer in answers:
                    _tick(fleet, reader, answer)

            mixed()
        finally:
            reader.close()
        figures = fleet.figures
        print(
            f"\nodd answers tried: {figures['answers']} ({len(fleet.tried)} kinds of "
            f"{len(CORPUS)}), ticks: {figures['ticks']}, lab samples lost: {figures['lost']}"
        )
        assert fleet.tried == {a.name for a in CORPUS}
        assert figures["lost"] == 0


@pytest.fixture(scope="module")
def odd_api(tmp_path_factory) -> Iterator[ApiServer]:
    path = tmp_path_factory.mktemp("odd-api")
    with api_server(sqlite_url(path), probe_per_minute=1000, probe_queue=64) as api:
        yield api


_REFUSED = [a for a in CORPUS if a.expect != "any"]


@pytest.mark.parametrize("answer", _REFUSED, ids=lambda a: a.name)
def test_the_connection_test_and_discovery_answer_502_with_the_reason(odd_api, answer):
    with OddMySQL(answer) as fake:
        body = {"host": "127.0.0.1", "port": fake.port, "user": "x", "timeout_s": 2.0}
        with odd_api.client() as c:
            tested = c.post("/api/v1/instances/test", json=body)
            assert tested.status_code == 502, tested.text
            cluster = c.post("/api/v1/clusters", json={"name": f"odd-{answer.name}"}).json()
            source = {"host": "127.0.0.1", "port": fake.port, "user": "x", "password": "pw"}
            added = c.post(
                "/api/v1/instances",
                json={**source, "name": "src", "role": "source", "cluster_id": cluster["id"]},
            )
            assert added.status_code in (200, 201), added.text
            discovered = c.post(f"/api/v1/clusters/{cluster['id']}/discover")
            # Discovery reads other statements: a row shaped for the poll may suit it (200).
            assert discovered.status_code in (200, 502), discovered.text
    for response in (tested, discovered):
        if response.status_code == 200:
            continue
        detail = response.json()["detail"]
        if answer.expect == "unexpected":
            assert "unexpected answer: " in detail, detail


@pytest.mark.parametrize("name", ["one_result_set", "no_row"])
def test_the_answers_that_were_500_name_their_reading(odd_api, name):
    with OddMySQL(BY_NAME[name]) as fake:
        body = {"host": "127.0.0.1", "port": fake.port, "user": "x", "timeout_s": 2.0}
        with odd_api.client() as c:
            tested = c.post("/api/v1/instances/test", json=body)
    assert tested.status_code == 502, tested.text
    assert tested.json()["title"] == "UnexpectedAnswer"
