"""POST /instances/test under attack and under load, and LAGSCOPE_ALLOWED_TARGETS.

Fake servers are loopback sockets: one that accepts and never answers (a silent or filtered
port, as slow as a test's timeout), one that answers in another protocol, a closed port. They
record every connection, so "was not contacted" is observed, not assumed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from sqlalchemy import select

from lagscope.collectors import targets
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.targets import AllowList
from lagscope.demo.processes import free_port
from lagscope.errors import ServerUnreachable
from lagscope.ingest.reader import ClusterReader
from lagscope.ingest.tick import poll_cluster
from lagscope.inventory import instances as inventory
from lagscope.models import Instance
from lagscope.security import users
from lagscope.security.secret_box import store_box
from tests.unit.fakes.fake_mysql import FakeMySQL

from .api_stack import SECRET, ApiServer, api_server, sqlite_url
from .pipeline_stack import SECRET as PIPELINE_SECRET
from .pipeline_stack import now, start_pipeline
from .waiting import wait_until

pytestmark = pytest.mark.integration


class FakePort:
    """A loopback listener that accepts, optionally says ``greeting`` and closes, or else
    holds every connection silently until the test ends."""

    def __init__(self, greeting: bytes | None = None, host: str = "127.0.0.1") -> None:
        self.sock = socket.create_server((host, 0), backlog=128)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._greeting = greeting
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed by stop()
            self.accepted += 1
            if self._greeting is None:
                self._held.append(conn)
            else:
                conn.sendall(self._greeting)
                conn.close()

    def stop(self) -> None:
        # close() alone leaves accept() blocked (Linux), and the join below waited out its 5 s.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for conn in self._held:
            conn.close()
        self._thread.join(timeout=5)


@contextmanager
def fake_port(greeting: bytes | None = None, host: str = "127.0.0.1") -> Iterator[FakePort]:
    port = FakePort(greeting, host)
    try:
        yield port
    finally:
        port.stop()


def token_for(api: ApiServer, username: str, role: str = "editor") -> str:
    with api.sessions() as session, session.begin():
        user = users.create_user(session, username, "a-long-password", role)
        return users.issue_token(session, user, "test")


def test_forty_slow_tests_do_not_hold_up_the_dashboard(tmp_path):
    # A queue of 4 keeps the run short; 4 tests run at a time (the default), the rest wait or
    # are refused. The per-user rate is lifted: this is about capacity, not the rate.
    with (
        api_server(sqlite_url(tmp_path), probe_queue=4, probe_per_minute=1000) as api,
        fake_port() as silent,
    ):
        body = {"host": "127.0.0.1", "port": silent.port, "user": "x", "timeout_s": 5}
        finished: list[tuple[float, int, httpx.Response]] = []

        def one_test(_: int) -> None:
            with api.client() as c:
                response = c.post("/api/v1/instances/test", json=body)
            finished.append((time.monotonic(), response.status_code, response))

        with ThreadPoolExecutor(40) as pool:
            futures = [pool.submit(one_test, i) for i in range(40)]
            wait_until(lambda: silent.accepted >= 4, timeout_s=60, message="4 tests connected")
            latencies = []
            with api.client() as c:
                for _ in range(5):
                    started = time.monotonic()
                    clusters = c.get("/api/v1/clusters")
                    latencies.append(time.monotonic() - started)
                    assert clusters.status_code == 200, clusters.text
            answered_at = time.monotonic()
            for f in futures:
                f.result()
        slow = [(t, r) for t, status, r in finished if status == 502]
        refused = [r for _, status, r in finished if status == 503]
        print(
            f"\nGET /clusters while 40 slow tests ran: max {max(latencies) * 1000:.1f} ms, "
            f"median {sorted(latencies)[2] * 1000:.1f} ms; {len(slow)} tests ran, "
            f"{len(refused)} refused"
        )
        # The dashboard answered while every slow test was still waiting on the silent port.
        assert answered_at < min(t for t, _ in slow)
        assert len(slow) == 8 and len(refused) == 32  # 4 running + 4 queued; the rest 503
        assert all(r.headers.get("retry-after") for r in refused)
        assert {r.json()["detail"] for _, r in slow} == {
            f"127.0.0.1:{silent.port}: unreachable, or not a MySQL/MariaDB server"
        }


def test_connection_tests_are_rate_limited_per_user(tmp_path):
    with api_server(sqlite_url(tmp_path), probe_per_minute=3) as api:
        closed = free_port()
        body = {"host": "127.0.0.1", "port": closed, "user": "x", "timeout_s": 0.2}
        with api.client() as c:
            assert [c.post("/api/v1/instances/test", json=body).status_code for _ in range(3)] == [
                502
            ] * 3
            limited = c.post("/api/v1/instances/test", json=body)
            assert limited.status_code == 429, limited.text
            assert 1 <= int(limited.headers["retry-after"]) <= 60
        with api.client(token_for(api, "erin")) as other:
            assert other.post("/api/v1/instances/test", json=body).status_code == 502


def test_a_closed_port_and_a_foreign_one_look_alike(tmp_path):
    """Nothing in the answer tells a closed port from a silent one or from another service;
    the fast failures are not answered before the test's timeout either."""
    timeout_s = 1.0
    with (
        api_server(sqlite_url(tmp_path), probe_per_minute=100) as api,
        fake_port() as silent,
        fake_port(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") as web,
        fake_port(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n") as ssh,
        api.client() as c,
    ):
        answers = {}
        for name, port in (
            ("closed", free_port()),
            ("silent", silent.port),
            ("http", web.port),
            ("ssh", ssh.port),
        ):
            started = time.monotonic()
            response = c.post(
                "/api/v1/instances/test",
                json={"host": "127.0.0.1", "port": port, "user": "x", "timeout_s": timeout_s},
            )
            took = time.monotonic() - started
            assert response.status_code == 502, (name, response.text)
            # Same body once the address it names is taken out.
            answers[name] = response.text.replace(str(port), "PORT")
            assert took >= timeout_s, (name, took)
        assert web.accepted == 1 and ssh.accepted == 1  # they were really talked to
        assert len(set(answers.values())) == 1, answers
        body = c.post(
            "/api/v1/instances/test",
            json={"host": "127.0.0.1", "port": free_port(), "user": "x", "timeout_s": 0.2},
        ).json()
        assert body["code"] is None and body["title"] == "ServerUnreachable"
        for telltale in ("refused", "timed out", "timeout", "Lost connection", "2003", "2013"):
            assert telltale not in body["detail"]


def test_a_mysql_server_refusing_the_host_keeps_its_reason(tmp_path):
    """A server's own error packet (1130 "host is not allowed") only comes from MySQL: the
    operator needs the reason, and it tells a scanner nothing a port number would not."""
    message = b"Host '127.0.0.1' is not allowed to connect to this MariaDB server"
    payload = b"\xff" + (1130).to_bytes(2, "little") + message
    packet = len(payload).to_bytes(3, "little") + b"\x00" + payload
    with (
        api_server(sqlite_url(tmp_path)) as api,
        fake_port(packet) as refusing,
        api.client() as c,
    ):
        answer = c.post(
            "/api/v1/instances/test",
            json={"host": "127.0.0.1", "port": refusing.port, "user": "x", "timeout_s": 1},
        )
        assert answer.status_code == 502, answer.text
        assert answer.json()["code"] == 1130 and "not allowed to connect" in answer.text


def test_the_allow_list_refuses_tests_and_instances(lab, tmp_path):
    replica = lab.server("replica1")  # on 127.0.0.1
    user, password = lab.credentials.monitor
    with (
        api_server(
            sqlite_url(tmp_path), allowed_targets="10.0.0.0/8, *.db.example", probe_per_minute=100
        ) as api,
        fake_port() as watched,
        api.client() as c,
    ):
        for host in ("127.0.0.1", "localhost"):
            refused = c.post(
                "/api/v1/instances/test",
                json={"host": host, "port": watched.port, "user": "x", "timeout_s": 0.5},
            )
            assert refused.status_code == 422, refused.text
            assert refused.json()["title"] == "TargetNotAllowed"
            assert "not allowed by LAGSCOPE_ALLOWED_TARGETS" in refused.json()["detail"]
        assert watched.accepted == 0  # refused before any connection

        cid = c.post("/api/v1/clusters", json={"name": "fenced"}).json()["id"]
        new = {"cluster_id": cid, "name": "db1", "user": "mon", "password": "pw-1"}
        outside = c.post("/api/v1/instances", json={**new, "host": "127.0.0.1"})
        assert outside.status_code == 422, outside.text
        assert "LAGSCOPE_ALLOWED_TARGETS" in outside.json()["detail"]
        unresolvable = c.post("/api/v1/instances", json={**new, "host": "nowhere.invalid"})
        assert unresolvable.status_code == 422
        assert "does not resolve" in unresolvable.json()["detail"]
        inside = c.post("/api/v1/instances", json={**new, "host": "10.1.2.3"})
        assert inside.status_code == 201, inside.text
        moved = c.patch(
            f"/api/v1/instances/{inside.json()['id']}",
            json={"host": "127.0.0.1", "password": "pw-1"},
        )
        assert moved.status_code == 422 and "LAGSCOPE_ALLOWED_TARGETS" in moved.text
        assert c.get(f"/api/v1/instances/{inside.json()['id']}").json()["host"] == "10.1.2.3"

    # A list that allows the lab: the test connects through the checked address and works.
    (tmp_path / "open").mkdir()
    with (
        api_server(sqlite_url(tmp_path / "open"), allowed_targets="127.0.0.0/8") as api,
        api.client() as c,
    ):
        tested = c.post(
            "/api/v1/instances/test",
            json={"host": "127.0.0.1", "port": replica.port, "user": user, "password": password},
        )
        assert tested.status_code == 200, tested.text
        assert tested.json()["flavor"] == "mariadb"


def test_polling_leaves_a_disallowed_instance_alone_and_says_so(lab, tmp_path):
    replica = lab.server("replica1")
    user, password = lab.credentials.monitor
    with api_server(sqlite_url(tmp_path)) as api, fake_port() as watched:
        box = store_box(api.sessions, SECRET)
        with api.sessions() as session, session.begin():
            cluster = inventory.create_cluster(session, "polled")
            real = inventory.add_instance(
                session, box, cluster, "replica1", "127.0.0.1", replica.port, user, password
            )
            fake = inventory.add_instance(
                session, box, cluster, "elsewhere", "127.0.0.1", watched.port, "x", ""
            )
            ids = cluster.id, real.id, fake.id
        reader = ClusterReader(max_threads=4)
        fence = AllowList.parse("10.0.0.0/8")

        def tick(allowed: AllowList | None) -> dict[int, dict[str, Any]]:
            with api.sessions() as session, session.begin():
                poll_cluster(session, box, reader, ids[0], 0.5, 0.5, allowed=allowed)
            with api.client() as c:
                status = c.get(f"/api/v1/clusters/{ids[0]}/status").json()
            return {i["id"]: i for i in status["instances"]}

        def refused(by_id: dict[int, dict[str, Any]]) -> bool:
            return all(
                "not allowed by LAGSCOPE_ALLOWED_TARGETS" in (by_id[i]["last_error"] or "")
                for i in ids[1:]
            )

        try:
            # Control: allowed, both are polled (the listener sees its connection).
            tick(AllowList.parse("127.0.0.1/32"))
            wait_until(lambda: watched.accepted == 1, timeout_s=30, message="the control poll")
            # Fenced off: a few ticks (the first may find the silent poll still running).
            by_id = wait_until(
                lambda: (state := tick(fence)) and refused(state) and state,
                timeout_s=60,
                message="both instances reported as not allowed",
            )
            tick(fence)
        finally:
            reader.close()
        assert watched.accepted == 1, "a disallowed instance was contacted"
        for instance_id in ids[1:]:
            assert by_id[instance_id]["reachable"] is False
            assert "not contacted" in by_id[instance_id]["last_error"]


def test_the_workers_poll_through_the_allow_list(lab, tmp_path, monkeypatch):
    """The real worker, beat and heartbeat writer with LAGSCOPE_ALLOWED_TARGETS set: the lab
    (127.0.0.1) is polled through checked sockets as usual, and an instance on 127.0.0.2 —
    outside the list — is never contacted and says why."""
    monkeypatch.setenv("LAGSCOPE_ALLOWED_TARGETS", "127.0.0.1/32")
    with fake_port(host="127.0.0.2") as fenced, start_pipeline(lab, tmp_path) as pipe:
        with pipe.session() as session, session.begin():
            cluster = inventory.get_cluster(session, pipe.cluster_id)
            extra = inventory.add_instance(
                session,
                store_box(pipe.sessions, PIPELINE_SECRET),
                cluster,
                "fenced",
                "127.0.0.2",
                fenced.port,
                "x",
                "",
            )
            fenced_id = extra.id

        def fenced_error() -> str | None:
            with pipe.session() as session:
                instance = session.get(Instance, fenced_id)
                return instance.last_error if instance else None

        error = wait_until(
            lambda: "not allowed" in (fenced_error() or "") and fenced_error(),
            timeout_s=60,
            message="the fenced instance reported as not allowed",
        )
        assert "LAGSCOPE_ALLOWED_TARGETS" in str(error) and "not contacted" in str(error)
        since = now()
        wait_until(
            lambda: len(pipe.samples("replica1", since)) >= 3,
            timeout_s=60,
            message="the allowed lab still polled",
        )
        pipe.assert_alive()
    assert fenced.accepted == 0


def test_a_checked_name_is_connected_by_its_checked_address(monkeypatch):
    """DNS rebinding: the name is resolved once; PyMySQL never looks it up again."""
    with fake_port() as silent:
        answers = iter([["127.0.0.1"], ["192.0.2.66"]])  # a second lookup would move it
        lookups: list[str] = []

        def rebinding(host: str, port: int) -> list[str]:
            lookups.append(host)
            return next(answers)

        real_getaddrinfo = socket.getaddrinfo

        def no_second_lookup(host, *args, **kwargs):  # type: ignore[no-untyped-def]
            assert host != "rebind.test", "the name was resolved again"
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(targets, "system_resolver", rebinding)
        monkeypatch.setattr(socket, "getaddrinfo", no_second_lookup)
        spec = ConnectionSpec(
            "rebind.test",
            silent.port,
            connect_timeout_s=0.5,
            read_timeout_s=0.5,
            allowed=AllowList.parse("127.0.0.0/8"),
        )
        executor = PyMySQLExecutor(spec)
        with pytest.raises(ServerUnreachable):
            executor.connect()  # the silent port never greets: a read timeout
        assert lookups == ["rebind.test"] and silent.accepted == 1


def test_editing_an_instance_tests_with_its_stored_password(lab, tmp_path):
    """Settings → edit → "Test connection" without retyping the password: ``instance_id``
    stands for the stored one, for the instance's own address, user and TLS only."""
    replica = lab.server("replica1")
    user, password = lab.credentials.monitor
    # The instance is made through this API server: its secret key encrypts the password.
    with (
        api_server(sqlite_url(tmp_path), probe_per_minute=100) as api,
        fake_port() as elsewhere,
        api.client() as c,
    ):
        cid = c.post("/api/v1/clusters", json={"name": "edited"}).json()["id"]
        made = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "replica1",
                "host": "127.0.0.1",
                "port": replica.port,
                "user": user,
                "password": password,
            },
        )
        assert made.status_code == 201, made.text
        iid = made.json()["id"]
        own = {"host": "127.0.0.1", "port": replica.port, "user": user, "timeout_s": 5}

        tested = c.post("/api/v1/instances/test", json={**own, "instance_id": iid})
        assert tested.status_code == 200, tested.text
        assert tested.json()["flavor"] == "mariadb"
        assert "REPLICA MONITOR" in tested.json()["privileges_found"]  # logged in as the monitor

        # Another port (a listener that records every connection), another user, weaker TLS:
        # refused before any connection, so the stored password goes nowhere.
        for other in (
            {"port": elsewhere.port},
            {"user": "someone_else"},
            {"host": "localhost"},
        ):
            refused = c.post("/api/v1/instances/test", json={**own, **other, "instance_id": iid})
            assert refused.status_code == 422, (other, refused.text)
            assert "only used for the instance's own" in refused.json()["detail"], refused.text
            assert "retype" in refused.json()["detail"]
        assert elsewhere.accepted == 0

        unknown = c.post("/api/v1/instances/test", json={**own, "instance_id": iid + 1000})
        assert unknown.status_code == 404, unknown.text

        # A password in the body is the one used ("" included: no password).
        typed = c.post(
            "/api/v1/instances/test", json={**own, "instance_id": iid, "password": password}
        )
        assert typed.status_code == 200, typed.text

        # TLS: the stored password is not sent under weaker protection than it was stored for.
        tightened = c.patch(f"/api/v1/instances/{iid}", json={"tls": "required"})
        assert tightened.status_code == 200, tightened.text
        weaker = c.post("/api/v1/instances/test", json={**own, "instance_id": iid})
        assert weaker.status_code == 422, weaker.text
        assert "tls" in weaker.json()["detail"]

        # A stored password no key decrypts (the key changed without keeping the old one).
        with api.sessions() as session, session.begin():
            instance = session.get(Instance, iid)
            assert instance is not None
            instance.password_enc = "gAAAAAB-not-a-token-under-any-key"
            instance.tls = "preferred"
        unreadable = c.post("/api/v1/instances/test", json={**own, "instance_id": iid})
        assert unreadable.status_code == 422, unreadable.text
        assert unreadable.json()["title"] == "CredentialsUnreadable"
        assert "credentials_unreadable" in unreadable.json()["detail"]


def test_a_polled_port_says_what_the_connection_test_says(tmp_path):
    """An instance's stored last_error (which editors and viewers read)
    tells no more about a closed, silent or foreign port than the connection test does, and
    the recorded time of the failed poll is the tick's, whichever way the port failed."""
    silent_timeout_s = 1.0
    with (
        api_server(sqlite_url(tmp_path), probe_per_minute=100) as api,
        fake_port() as silent,
        fake_port(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") as web,
        fake_port(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n") as ssh,
        api.client() as c,
    ):
        ports = {"closed": free_port(), "silent": silent.port, "http": web.port, "ssh": ssh.port}
        box = store_box(api.sessions, SECRET)
        with api.sessions() as session, session.begin():
            cluster = inventory.create_cluster(session, "ports", poll_interval_s=1.0)
            for name, port in ports.items():
                inventory.add_instance(session, box, cluster, name, "127.0.0.1", port, "x", "")
            cluster_id = cluster.id
        reader = ClusterReader(max_threads=8)
        ticks: list[float] = []
        try:
            for _ in range(3):  # the silent port's poll runs past the first tick's deadline
                ticks.append(time.time())
                with api.sessions() as session, session.begin():
                    poll_cluster(
                        session, box, reader, cluster_id, silent_timeout_s, silent_timeout_s
                    )
                stored = {}
                with api.sessions() as session:
                    rows = session.scalars(
                        select(Instance).where(Instance.cluster_id == cluster_id)
                    )
                    for row in rows:
                        stored[row.name] = (row.last_error, row.last_polled_at)
                said = {n: (e or "").replace(str(ports[n]), "PORT") for n, (e, _) in stored.items()}
                assert len(set(said.values())) == 1, said
                polled_at = {at.timestamp() for _, at in stored.values() if at is not None}
                assert len(polled_at) == 1 and ticks[-1] <= polled_at.pop() <= time.time()
        finally:
            reader.close()
        assert web.accepted >= 1 and ssh.accepted >= 1 and silent.accepted >= 1
        test = c.post(
            "/api/v1/instances/test",
            json={"host": "127.0.0.1", "port": ports["http"], "user": "x", "timeout_s": 0.5},
        )
        assert test.status_code == 502
        assert said["http"] == test.json()["detail"].replace(str(ports["http"]), "PORT")


@pytest.mark.parametrize("plugin", ["sha256_password", "caching_sha2_password"])
def test_a_rogue_sha2_server_gets_no_stored_password_from_the_connection_test(tmp_path, plugin):
    """A server at the instance's own address switches the login to a SHA-2
    plugin and offers its own RSA key. Editing → "Test connection" (instance_id, no password)
    says why it stopped and sends nothing; with a pinned key (set by PATCH, which wants the
    password again) the server receives the password encrypted with the pinned key only."""
    rogue_key, real_key = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in "ab"
    )
    ca_dir = tmp_path / "ca"
    ca_dir.mkdir()
    pin = ca_dir / "db1-public.pem"
    pin.write_bytes(
        real_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    secret = "stored-Hunter2"
    with (
        api_server(sqlite_url(tmp_path), probe_per_minute=100, tls_ca_dir=str(ca_dir)) as api,
        api.client() as c,
        FakeMySQL(switch_to=plugin, rsa_key=rogue_key) as rogue,
    ):
        cid = c.post("/api/v1/clusters", json={"name": "sha2"}).json()["id"]
        own = {"host": "127.0.0.1", "port": rogue.port, "user": "mon", "timeout_s": 5}
        made = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "db1",
                "host": "127.0.0.1",
                "port": rogue.port,
                "user": "mon",
                "password": secret,
            },
        )
        assert made.status_code == 201, made.text
        iid = made.json()["id"]
        assert made.json()["server_public_key_path"] is None

        tested = c.post("/api/v1/instances/test", json={**own, "instance_id": iid})
        assert tested.status_code == 502, tested.text
        assert tested.json()["title"] == "Sha2AuthRefused"
        detail = tested.json()["detail"]
        assert f"server asked for the password by {plugin}" in detail
        assert "server_public_key_path" in detail and "verify_identity" in detail
    assert secret.encode() not in rogue.received
    assert all(len(answer) <= 32 for answer in rogue.auth_answers)  # scrambles, no RSA blob

    with (
        api_server(sqlite_url(tmp_path), probe_per_minute=100, tls_ca_dir=str(ca_dir)) as api,
        api.client() as c,
    ):
        outside = c.patch(
            f"/api/v1/instances/{iid}",
            json={"server_public_key_path": str(tmp_path / "x.pem"), "password": secret},
        )
        assert outside.status_code == 422, outside.text
        assert "LAGSCOPE_TLS_CA_DIR" in outside.json()["detail"]
        unconfirmed = c.patch(f"/api/v1/instances/{iid}", json={"server_public_key_path": str(pin)})
        assert unconfirmed.status_code == 422, unconfirmed.text
        assert "changing server_public_key_path needs the password" in unconfirmed.json()["detail"]
        pinned = c.patch(
            f"/api/v1/instances/{iid}",
            json={"server_public_key_path": str(pin), "password": secret},
        )
        assert pinned.status_code == 200, pinned.text
        assert pinned.json()["server_public_key_path"] == str(pin)
        with FakeMySQL(switch_to=plugin, rsa_key=rogue_key) as again:
            with api.sessions() as session, session.begin():
                instance = session.get(Instance, iid)
                assert instance is not None
                instance.port = again.port  # the rogue's new listener, same instance
            own = {"host": "127.0.0.1", "port": again.port, "user": "mon", "timeout_s": 5}
            other = {"server_public_key_path": str(ca_dir / "other.pem")}
            not_its_pin = c.post(
                "/api/v1/instances/test", json={**own, **other, "instance_id": iid}
            )
            assert not_its_pin.status_code == 422, not_its_pin.text  # the password stays
            assert "server_public_key_path differs" in not_its_pin.json()["detail"]
            c.post(
                "/api/v1/instances/test",
                json={**own, "instance_id": iid, "server_public_key_path": str(pin)},
            )
        blob = again.auth_answers[-1]
        assert secret.encode() not in again.received
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
        with pytest.raises(ValueError):
            rogue_key.decrypt(blob, oaep)  # the rogue cannot read it
        plain = real_key.decrypt(blob, oaep)  # the pinned key's owner can
        salt = again.auth_salt
        assert bytes(b ^ salt[i % 20] for i, b in enumerate(plain)) == secret.encode() + b"\0"
