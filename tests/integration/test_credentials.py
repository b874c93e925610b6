"""Stored credentials and logins on the real pipeline (lab, Redis, Celery worker, beat, heartbeat
writer) and the real API: key rotation, an undecryptable credential, refused-login back-off.

The store is registered under OLD (an existing deployment); the processes run with
LAGSCOPE_SECRET_KEY=NEW and LAGSCOPE_OLD_SECRET_KEYS=OLD, the first step of a rotation.
Tests run in file order and each leaves every instance polling with the monitor login.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pymysql
import pytest
from cryptography.fernet import Fernet
from sqlalchemy import func, select

from lagscope.inventory import instances as inventory
from lagscope.models import Channel, Cluster, Instance, InstanceSample, Sample, WebhookTarget
from lagscope.security.secret_box import SecretBox, store_salt

from .api_stack import ApiServer, api_server
from .pipeline_stack import Pipeline, now, start_pipeline
from .stack import lagscope_command, wait_worker_ready
from .waiting import wait_until

pytestmark = pytest.mark.integration

OLD = "old-secret-4a1f9c7e2b5d8036-Lm3Np7Qr1St"
NEW = "new-secret-7c2e5a9f1d3b6084-Uv5Wx9Yz3Ab"


@pytest.fixture(scope="module")
def pipe(lab, tmp_path_factory) -> Iterator[Pipeline]:
    keys = {"LAGSCOPE_SECRET_KEY": NEW, "LAGSCOPE_OLD_SECRET_KEYS": OLD}
    workdir = tmp_path_factory.mktemp("credentials")
    with start_pipeline(lab, workdir, secret=OLD, extra_env=keys) as started:
        yield started


@pytest.fixture(scope="module")
def api(pipe: Pipeline) -> Iterator[ApiServer]:
    with api_server(pipe.url, secret_key=NEW, old_secret_keys=OLD) as server:
        yield server


# --- helpers --------------------------------------------------------------------------------


def legacy_token(key: str, plain: str) -> str:
    """A value as Lagscope wrote it before the salted KDF: Fernet under SHA-256(key)."""
    fernet = Fernet(base64.urlsafe_b64encode(hashlib.sha256(key.encode()).digest()))
    return fernet.encrypt(plain.encode()).decode()


def instance_id(pipe: Pipeline, name: str) -> int:
    with pipe.session() as s:
        found = s.scalar(
            select(Instance.id).where(Instance.cluster_id == pipe.cluster_id, Instance.name == name)
        )
        assert found is not None
        return found


def polls(pipe: Pipeline, name: str, since: datetime, reachable: bool = True) -> int:
    """This instance's recorded polls since ``since`` that reached it (or did not)."""
    with pipe.session() as s:
        count = s.scalar(
            select(func.count())
            .select_from(InstanceSample)
            .where(
                InstanceSample.instance_id == instance_id(pipe, name),
                InstanceSample.ts >= since,
                InstanceSample.reachable.is_(reachable),
            )
        )
        return int(count or 0)


def first_ok_poll(pipe: Pipeline, name: str, since: datetime) -> datetime | None:
    with pipe.session() as s:
        return s.scalar(
            select(func.min(InstanceSample.ts)).where(
                InstanceSample.instance_id == instance_id(pipe, name),
                InstanceSample.ts >= since,
                InstanceSample.reachable.is_(True),
            )
        )


def wait_polling(pipe: Pipeline, names: tuple[str, ...], since: datetime, count: int = 3) -> None:
    for name in names:
        wait_until(
            lambda name=name: polls(pipe, name, since) >= count,
            timeout_s=60,
            message=f"{count} polls of {name} that reached it",
        )
    pipe.assert_alive()


def wait_heartbeat_fresh(pipe: Pipeline, since: datetime, replica: str = "replica1") -> None:
    """A replica sample after ``since`` whose heartbeat is under 2 s old: the writer writes (a
    stopped writer's heartbeat only ages)."""

    def fresh() -> bool:
        with pipe.session() as s:
            rows = s.scalars(
                select(Sample.heartbeat_lag_s)
                .join(Channel, Channel.id == Sample.channel_id)
                .join(Instance, Instance.id == Channel.instance_id)
                .where(Instance.id == instance_id(pipe, replica), Sample.ts >= since)
            ).all()
        return any(lag is not None and lag < 2.0 for lag in rows)

    wait_until(fresh, timeout_s=60, message=f"a fresh heartbeat on {replica}")


def instance_status(api: ApiServer, pipe: Pipeline, name: str) -> dict[str, Any]:
    with api.client() as c:
        body = c.get(f"/api/v1/clusters/{pipe.cluster_id}/status").json()
    return next(i for i in body["instances"] if i["name"] == name)


def stored_tokens(pipe: Pipeline) -> dict[str, str]:
    with pipe.session() as s:
        tokens = {f"instance {i.name}": i.password_enc for i in s.scalars(select(Instance))}
        for cluster in s.scalars(select(Cluster)):
            tokens[f"heartbeat {cluster.name}"] = cluster.heartbeat_password_enc or ""
        for hook in s.scalars(select(WebhookTarget)):
            tokens[f"webhook {hook.name}"] = hook.secret_enc
    return tokens


def rotate(pipe: Pipeline) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        lagscope_command("secrets", "rotate"),
        env=pipe.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def patch_instance(api: ApiServer, ident: int, body: dict[str, Any]) -> None:
    with api.client() as c:
        response = c.patch(f"/api/v1/instances/{ident}", json=body)
        assert response.status_code == 200, response.text


# --- the tests ------------------------------------------------------------------------------

EVERYONE = ("source", "replica1", "replica2")


def test_rotation_reencrypts_and_polling_continues(lab, pipe: Pipeline):
    # A value from before the salted KDF (an upgraded store): the heartbeat password; and a
    # webhook signing secret under the old key.
    with pipe.session() as s, s.begin():
        cluster = s.get_one(Cluster, pipe.cluster_id)
        cluster.heartbeat_password_enc = legacy_token(OLD, lab.credentials.heartbeat[1])
        secret = SecretBox(OLD, store_salt(pipe.sessions)).encrypt("whsec-1")
        url = "http://127.0.0.1:9/"
        s.add(
            WebhookTarget(name="hook", kind="generic", url=url, secret_enc=secret, created_at=now())
        )
    wait_polling(pipe, EVERYONE, now())
    before = stored_tokens(pipe)

    result = rotate(pipe)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["rotated"] == {
        "instance_passwords": 3,
        "heartbeat_passwords": 1,
        "webhook_secrets": 1,
    }
    assert report["decrypted_with"] == {"old key 1": 4, "old key 1 (legacy SHA-256)": 1}

    after = stored_tokens(pipe)
    assert all(after[k] != before[k] for k in before), "every value was re-encrypted"
    new_only = SecretBox(NEW, store_salt(pipe.sessions))
    old_only = SecretBox(OLD, store_salt(pipe.sessions))
    assert [new_only.key_used(t) for t in after.values()] == [0] * len(after)
    assert [old_only.key_used(t) for t in after.values()] == [None] * len(after)
    assert new_only.decrypt(after["instance replica1"]) == lab.credentials.monitor[1]

    # The running worker (NEW + OLD) reads the new values.
    wait_polling(pipe, EVERYONE, now())
    # The old key dropped everywhere: worker and heartbeat writer restarted with NEW only.
    restarted = now()
    assert pipe.env is not None
    wait_worker_ready(pipe.restart("worker", LAGSCOPE_OLD_SECRET_KEYS=""), pipe.env)
    pipe.restart("heartbeat", LAGSCOPE_OLD_SECRET_KEYS="")
    wait_polling(pipe, EVERYONE, restarted)
    wait_heartbeat_fresh(pipe, restarted)
    assert json.loads(rotate(pipe).stdout)["decrypted_with"] == {"current key": 5}


def test_one_unreadable_credential_marks_that_instance_only(lab, pipe: Pipeline, api: ApiServer):
    foreign = Fernet(Fernet.generate_key())
    user, password = lab.credentials.monitor
    replica1 = instance_id(pipe, "replica1")
    box = SecretBox(NEW, store_salt(pipe.sessions))
    with pipe.session() as s, s.begin():
        s.get_one(Instance, replica1).password_enc = foreign.encrypt(password.encode()).decode()
        # A second cluster whose heartbeat password is unreadable: its writer cannot start, the
        # lab cluster's writer must go on.
        other = inventory.create_cluster(s, "other", heartbeat_mode="lagscope")
        src = lab.server("source")
        inventory.add_instance(s, box, other, "src", src.host, src.port, user, password, "source")
        other.heartbeat_user = lab.credentials.heartbeat[0]
        other.heartbeat_password_enc = foreign.encrypt(b"whatever").decode()
        other_id = other.id

    try:
        state = wait_until(
            lambda: (
                (st := instance_status(api, pipe, "replica1"))["login_state"]
                == "credentials_unreadable"
                and st
            ),
            timeout_s=60,
            message="replica1 credentials_unreadable in the status API",
        )
        assert state["reachable"] is False
        assert "LAGSCOPE_OLD_SECRET_KEYS" in state["last_error"]
        assert state["next_attempt_at"] is None
        flagged = now()
        wait_polling(pipe, ("source", "replica2"), flagged, count=5)
        wait_heartbeat_fresh(pipe, flagged, "replica2")  # the lab cluster's writer writes on
        assert polls(pipe, "replica1", flagged) == 0
        assert polls(pipe, "replica1", flagged, reachable=False) >= 5  # recorded, not skipped
        others = {n: instance_status(api, pipe, n)["login_state"] for n in ("source", "replica2")}
        assert others == {"source": "ok", "replica2": "ok"}

        # Rotation refuses, names both, and changes nothing.
        before = stored_tokens(pipe)
        refused = rotate(pipe)
        assert refused.returncode == 2, refused.stdout
        error = json.loads(refused.stderr.strip().splitlines()[-1])
        assert error["unreadable"] == [
            f"instance {replica1} (lab/replica1) password",
            f"cluster {other_id} (other) heartbeat password",
        ]
        assert stored_tokens(pipe) == before

        # Entering the password again is the cure.
        patch_instance(api, replica1, {"password": password})
        fixed = now()
        wait_polling(pipe, ("replica1",), fixed, count=2)
        assert instance_status(api, pipe, "replica1")["login_state"] == "ok"
    finally:
        with pipe.session() as s, s.begin():
            s.delete(s.get_one(Cluster, other_id))
            restored = s.get_one(Instance, replica1)
            if restored.login_state == "credentials_unreadable":
                restored.password_enc = box.encrypt(password)


def access_denied_errors(admin: pymysql.Connection[Any]) -> int:
    with admin.cursor() as c:
        c.execute("SHOW GLOBAL STATUS LIKE 'Access_denied_errors'")
        row = c.fetchone()
    assert row is not None
    return int(row[1])


def test_refused_logins_back_off_and_a_new_password_resumes_at_once(
    lab, pipe: Pipeline, api: ApiServer
):
    """A wrong password is tried at 0, 1, 3, 7, 15 … s (not every tick), counted by the server
    itself; MariaDB's max_password_errors=10 would block the account within 10 ticks without
    the back-off. Editing the password retries at once, not at the scheduled attempt."""
    right, wrong = "bo-right-password-8e1d", "bo-wrong-password-1234"
    monitor_user, monitor_password = lab.credentials.monitor
    replica1 = instance_id(pipe, "replica1")
    server = lab.server("replica1")
    admin = lab.connect("replica1")
    with admin.cursor() as c:
        # A replica-local account: written to replica1's binlog it would take a GTID of its
        # own, and the source's next transaction would then stop replication under
        # gtid_strict_mode (seen: it broke the shared lab for every later test).
        c.execute("SET SESSION sql_log_bin = 0")
        c.execute("SELECT @@global.max_password_errors")
        saved_limit = (c.fetchone() or (4294967295,))[0]
        c.execute("CREATE USER 'lagscope_bo'@'%%' IDENTIFIED BY %s", (right,))
        c.execute("GRANT BINLOG MONITOR, REPLICA MONITOR, PROCESS ON *.* TO 'lagscope_bo'@'%'")
        c.execute("GRANT SELECT ON performance_schema.* TO 'lagscope_bo'@'%'")
        c.execute("SET GLOBAL max_password_errors = 10")
    try:
        denied_before = access_denied_errors(admin)
        started = now()
        patch_instance(api, replica1, {"user": "lagscope_bo", "password": wrong})
        began = time.monotonic()
        # Ticks go on for the others while replica1 is refused (this is the time that passes).
        wait_until(
            lambda: polls(pipe, "replica2", started) >= 30,
            timeout_s=180,
            message="30 polls of replica2",
        )
        elapsed_s = time.monotonic() - began
        attempts = access_denied_errors(admin) - denied_before
        ticks = {n: polls(pipe, n, started) for n in ("source", "replica2")}
        state = instance_status(api, pipe, "replica1")
        print(f"elapsed {elapsed_s:.1f} s, ticks {ticks}, server-counted refusals {attempts}")
        assert state["login_state"] == "access_denied" and state["reachable"] is False
        assert "Access denied" in state["last_error"]
        next_at = datetime.fromisoformat(state["next_attempt_at"])
        assert next_at > started
        # 1 + log2(elapsed) tries at most (doubling from 1 s), against ~elapsed ticks.
        assert 2 <= attempts <= math.log2(elapsed_s + 1) + 2, (attempts, elapsed_s)
        assert ticks["source"] >= 25 and ticks["replica2"] >= 30
        with pipe.session() as s:
            assert s.get_one(Instance, replica1).login_failures >= attempts - 1
        # The account is not blocked (10 refusals would have blocked it: error 4150).
        pymysql.connect(
            host=server.host, port=server.port, user="lagscope_bo", password=right
        ).close()

        patch_instance(api, replica1, {"password": right})
        fixed = now()
        wait_until(
            lambda: first_ok_poll(pipe, "replica1", fixed),
            timeout_s=60,
            message="replica1 polled again with the new password",
        )
        first_ok = first_ok_poll(pipe, "replica1", fixed)
        assert first_ok is not None and first_ok < next_at, (first_ok, next_at)
        state = instance_status(api, pipe, "replica1")
        assert state["login_state"] == "ok" and state["next_attempt_at"] is None
    finally:
        patch_instance(api, replica1, {"user": monitor_user, "password": monitor_password})
        with admin.cursor() as c:
            c.execute(f"SET GLOBAL max_password_errors = {int(saved_limit)}")
            c.execute("DROP USER IF EXISTS 'lagscope_bo'@'%'")
        admin.close()
    wait_polling(pipe, EVERYONE, now())
