"""Every command `lagscope --help` lists, run as a user runs it: the installed ``lagscope``
entry point in a subprocess, against the real lab and a throwaway store (SQLite, a Redis of its
own), its output read and checked — not only its exit status.

``probe`` on the source and a replica with each ``--heartbeat`` mode, ``health``, ``import``
(``--dry-run``, then applied), ``annotate`` through a real API, ``secrets generate-key`` and
``rotate``, ``migrate``, the ``user`` commands, ``lab status``; ``api``, ``worker``, ``beat``
and ``heartbeat`` each started for real until they report themselves; ``demo`` and
``scenario`` (which start a lab and load of their own) by their help only.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import inspect, select

from lagscope.config import Settings, generate_key
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import ManagedProcess, RedisServer, free_port
from lagscope.inventory import instances as inventory
from lagscope.models import Cluster
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .api_stack import api_server
from .waiting import wait_until

pytestmark = pytest.mark.integration

# The console script pip installed next to this interpreter: what a user types.
LAGSCOPE = str(Path(sys.executable).with_name("lagscope"))
COMMANDS = {
    "annotate",
    "api",
    "beat",
    "check-token",
    "demo",
    "health",
    "heartbeat",
    "import",
    "lab",
    "migrate",
    "probe",
    "scenario",
    "secrets",
    "user",
    "worker",
}
GROUPS = {
    "check-token": {"create", "list", "revoke"},
    "lab": {"up", "down", "status", "proxy", "incident"},
    "secrets": {"generate-key", "rotate"},
    "user": {
        "create",
        "list",
        "disable",
        "enable",
        "delete",
        "set-role",
        "set-password",
        "tokens",
        "revoke-token",
    },
}
# A written heartbeat: 2026-01-02 03:04:05.25 UTC.
BEAT_TEXT = "2026-01-02 03:04:05.250000"
BEAT_EPOCH_S = datetime(2026, 1, 2, 3, 4, 5, 250000, tzinfo=UTC).timestamp()


def lagscope(
    env: dict[str, str], *args: str, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LAGSCOPE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def listed_commands(help_text: str) -> set[str]:
    """The command names under ``Commands:`` in click's help."""
    lines = help_text.split("Commands:", 1)[1].splitlines()
    return {line.split()[0] for line in lines if line.startswith("  ") and line.strip()}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def redis(workdir: Path) -> Iterator[RedisServer]:
    server = RedisServer(workdir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def env(workdir: Path, redis: RedisServer) -> dict[str, str]:
    """A store of its own (migrated by the `migrate` command itself), its key and broker."""
    url = f"sqlite:///{workdir / 'store.db'}"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LAGSCOPE_", "MYSQL_PWD"))}
    made = {
        **base,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_SECRET_KEY": generate_key(),
        "LAGSCOPE_BROKER_URL": redis.url,
        "PYTHONUNBUFFERED": "1",
    }
    migrated = lagscope(made, "migrate")
    assert migrated.returncode == 0, migrated.stderr
    return made


def test_every_listed_command_is_covered_here_and_answers_help(env: dict[str, str]):
    top = lagscope(env, "--help")
    assert top.returncode == 0, top.stderr
    # A command added later without a test here fails this line.
    assert listed_commands(top.stdout) == COMMANDS
    for group, subcommands in GROUPS.items():
        shown = lagscope(env, group, "--help")
        assert shown.returncode == 0, shown.stderr
        assert listed_commands(shown.stdout) == subcommands, group
    for command in sorted(COMMANDS - {"worker", "beat"}):  # those two pass --help to Celery
        shown = lagscope(env, command, "--help")
        assert shown.returncode == 0, (command, shown.stderr)
        assert shown.stdout.startswith(f"Usage: lagscope {command} "), shown.stdout
    version = lagscope(env, "--version")
    assert version.returncode == 0 and version.stdout.startswith("lagscope, version ")


@pytest.fixture(scope="module")
def heartbeat_tables(lab) -> Iterator[None]:
    """A Lagscope heartbeat table and a pt-heartbeat one on the source (replicated), each with
    one row from the source; the lab's monitor may read the `lagscope` schema."""
    admin = lab.connect("source")
    try:
        with admin.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS lagscope")
            cur.execute(
                "CREATE OR REPLACE TABLE lagscope.cli_beat "
                "(server_id INT UNSIGNED PRIMARY KEY, ts DATETIME(6) NOT NULL)"
            )
            cur.execute(
                "CREATE OR REPLACE TABLE lagscope.cli_pt_beat "
                "(server_id INT UNSIGNED PRIMARY KEY, ts VARCHAR(26) NOT NULL)"
            )
            for table, ts in (
                ("cli_beat", BEAT_TEXT),
                ("cli_pt_beat", BEAT_TEXT.replace(" ", "T")),
            ):
                cur.execute(
                    f"INSERT INTO lagscope.{table} VALUES (@@server_id, %s)",
                    (ts,),
                )
        lab.wait_caught_up(timeout_s=60)
        yield
    finally:
        with admin.cursor() as cur:
            cur.execute("DROP TABLE IF EXISTS lagscope.cli_beat, lagscope.cli_pt_beat")
        admin.close()


HEARTBEAT_ARGS = {
    "none": [],
    "lagscope": ["--heartbeat", "lagscope", "--heartbeat-table", "lagscope.cli_beat"],
    "pt-heartbeat": ["--heartbeat", "pt-heartbeat", "--heartbeat-table", "lagscope.cli_pt_beat"],
}


@pytest.mark.parametrize("mode", sorted(HEARTBEAT_ARGS))
@pytest.mark.parametrize("name", ["source", "replica1"])
def test_probe_prints_a_snapshot_of_the_source_and_a_replica(
    lab, env: dict[str, str], heartbeat_tables: None, name: str, mode: str
):
    server = lab.server(name)
    user, password = lab.credentials.monitor
    found = lagscope(
        {**env, "MYSQL_PWD": password},
        "probe",
        "--host",
        server.host,
        "--port",
        str(server.port),
        "--user",
        user,
        "--timeout",
        "10",
        *HEARTBEAT_ARGS[mode],
    )
    assert found.returncode == 0, found.stderr
    assert password not in found.stdout + found.stderr
    snapshot: dict[str, Any] = json.loads(found.stdout)
    assert snapshot["server"] == f"{server.host}:{server.port}"
    assert snapshot["server_id"] == server.server_id
    assert snapshot["flavor"]["product"] == "mariadb"
    assert snapshot["gtid"]["executed"]
    assert "parsed" not in snapshot  # the tick's working state, not a reading
    if name == "source":
        assert snapshot["is_replica"] is False and snapshot["channels"] == []
        assert snapshot["source"]["binlog_file"]
    else:
        assert snapshot["is_replica"] is True
        (channel,) = snapshot["channels"]
        assert channel["io_running"] is True
        assert channel["source_port"] == lab.source.port
    if mode == "none":
        assert snapshot["heartbeat"] is None
    else:
        beat = snapshot["heartbeat"]
        assert beat["table"] == HEARTBEAT_ARGS[mode][-1]
        assert beat["rows"] == [{"server_id": lab.source.server_id, "ts": BEAT_EPOCH_S}]
        assert "heartbeat" not in snapshot["problems"]


def test_probe_names_the_cause_when_it_cannot_log_in(lab, env: dict[str, str]):
    refused = lagscope(
        {**env, "MYSQL_PWD": "not-the-password"},
        "probe",
        "--port",
        str(lab.source.port),
        "--user",
        "monitor",
        "--timeout",
        "10",
    )
    assert refused.returncode == 2 and refused.stdout == ""
    error = json.loads(refused.stderr)
    assert error["error"] == "LoginRefused" and error["code"] == 1045
    assert error["server"] == f"127.0.0.1:{lab.source.port}"


def test_migrate_makes_a_new_store_and_is_idempotent(env: dict[str, str], workdir: Path):
    url = f"sqlite:///{workdir / 'fresh.db'}"
    for _ in range(2):
        done = lagscope(env, "migrate", "--url", url)
        assert done.returncode == 0, done.stderr
    engine = make_engine(url)
    try:
        tables = set(inspect(engine).get_table_names())
        with engine.connect() as conn:
            (version,) = conn.exec_driver_sql("SELECT version_num FROM alembic_version").one()
    finally:
        engine.dispose()
    assert {"clusters", "instances", "samples", "users"} <= tables
    heads = subprocess.run(
        [sys.executable, "-m", "alembic", "heads"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[2],
    )
    assert heads.stdout.split()[0] == version


def test_secrets_generate_key_and_rotate(env: dict[str, str], workdir: Path):
    keys = [lagscope(env, "secrets", "generate-key") for _ in range(2)]
    assert all(k.returncode == 0 for k in keys)
    first, second = (k.stdout.strip() for k in keys)
    assert first != second
    assert len(base64.urlsafe_b64decode(first + "=")) == 32
    Settings(database_url="sqlite://", secret_key=first)  # strong enough to start with

    url = f"sqlite:///{workdir / 'rotate.db'}"
    upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    try:
        with sessions() as session, session.begin():
            cluster = inventory.create_cluster(session, "keys")
            inventory.add_instance(
                session,
                store_box(sessions, first),
                cluster,
                "db",
                "127.0.0.1",
                3306,
                "u",
                "pw-7",
                "source",
                "",
            )
        rotating = {
            **env,
            "LAGSCOPE_DATABASE_URL": url,
            "LAGSCOPE_SECRET_KEY": second,
            "LAGSCOPE_OLD_SECRET_KEYS": first,
        }
        dry = lagscope(rotating, "secrets", "rotate", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        report = json.loads(dry.stdout)
        assert report["dry_run"] is True and report["rotated"]["instance_passwords"] == 1
        assert report["decrypted_with"] == {"old key 1": 1}
        done = lagscope(rotating, "secrets", "rotate")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["rotated"]["instance_passwords"] == 1
        with sessions() as session:
            stored = session.scalars(select(Cluster)).one().instances[0].password_enc
        assert store_box(sessions, second).decrypt(stored) == "pw-7"
        # Rotated: the old key is no longer needed, and alone it reads nothing.
        unreadable = lagscope(
            {**rotating, "LAGSCOPE_SECRET_KEY": first, "LAGSCOPE_OLD_SECRET_KEYS": ""},
            "secrets",
            "rotate",
            "--dry-run",
        )
        assert unreadable.returncode == 2
        assert json.loads(unreadable.stderr)["unreadable"] == ["instance 1 (keys/db) password"]
    finally:
        engine.dispose()


IMPORT_FILE = """\
clusters:
  - name: cli-lab
    poll_interval_s: 2
    instances:
      - name: source
        host: 127.0.0.1
        port: {source}
        user: monitor
        password: {password}
        role: source
      - name: replica1
        host: 127.0.0.1
        port: {replica}
        user: monitor
        password: {password}
"""


def test_import_dry_run_then_apply_the_lab(lab, env: dict[str, str], workdir: Path):
    user, password = lab.credentials.monitor
    path = workdir / "lab.yaml"
    path.write_text(
        IMPORT_FILE.format(
            source=lab.source.port, replica=lab.server("replica1").port, password=password
        )
    )
    dry = lagscope(env, "import", "--dry-run", str(path))
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        "cluster cli-lab: created",
        "instance cli-lab/source: created",
        "instance cli-lab/replica1: created",
        "3 created, 0 changed, 0 unchanged (dry run: nothing written)",
    ]
    engine = make_engine(env["LAGSCOPE_DATABASE_URL"])
    sessions = make_session_factory(engine)
    try:
        with sessions() as session:
            assert session.scalars(select(Cluster).where(Cluster.name == "cli-lab")).first() is None
        applied = lagscope(env, "import", str(path))
        assert applied.returncode == 0, applied.stderr
        assert applied.stdout.splitlines()[-1] == "3 created, 0 changed, 0 unchanged"
        again = lagscope(env, "import", str(path))
        assert again.stdout.splitlines()[-1] == "0 created, 0 changed, 3 unchanged"
        assert password not in dry.stdout + applied.stdout + again.stdout + again.stderr
        box = store_box(sessions, env["LAGSCOPE_SECRET_KEY"])
        with sessions() as session:
            cluster = session.scalars(select(Cluster).where(Cluster.name == "cli-lab")).one()
            stored = {
                i.name: (i.host, i.port, i.user, box.decrypt(i.password_enc), i.role)
                for i in cluster.instances
            }
    finally:
        engine.dispose()
    assert stored == {
        "source": ("127.0.0.1", lab.source.port, user, password, "source"),
        "replica1": ("127.0.0.1", lab.server("replica1").port, user, password, "replica"),
    }


def test_user_commands(env: dict[str, str]):
    created = lagscope(
        {**env, "LAGSCOPE_NEW_USER_PASSWORD": "a-long-cli-password"},
        "user",
        "create",
        "--username",
        "cli-ops",
        "--role",
        "editor",
    )
    assert created.returncode == 0, created.stderr
    user = json.loads(created.stdout)
    assert (user["username"], user["role"]) == ("cli-ops", "editor")
    listed = [json.loads(line) for line in lagscope(env, "user", "list").stdout.splitlines()]
    assert {"id": user["id"], "username": "cli-ops", "role": "editor", "disabled": False} in listed
    changed = lagscope(env, "user", "set-role", "cli-ops", "viewer")
    assert json.loads(changed.stdout)["role"] == "viewer"
    assert json.loads(lagscope(env, "user", "disable", "cli-ops").stdout)["disabled"] is True
    assert json.loads(lagscope(env, "user", "enable", "cli-ops").stdout)["disabled"] is False
    assert lagscope(env, "user", "tokens", "cli-ops").stdout == ""
    reset = lagscope(
        {**env, "LAGSCOPE_NEW_USER_PASSWORD": "another-long-password"},
        "user",
        "set-password",
        "cli-ops",
    )
    assert reset.returncode == 0, reset.stderr
    assert lagscope(env, "user", "delete", "cli-ops").returncode == 0
    gone = lagscope(env, "user", "disable", "cli-ops")
    assert gone.returncode == 2 and json.loads(gone.stderr)["message"] == "no user 'cli-ops'"
    missing = lagscope(env, "user", "revoke-token", "999999")
    assert missing.returncode == 2 and "token 999999 not found" in missing.stderr


def test_annotate_puts_a_note_through_the_api(env: dict[str, str]):
    with api_server(env["LAGSCOPE_DATABASE_URL"], secret_key=env["LAGSCOPE_SECRET_KEY"]) as api:
        with api.client() as c:
            c.post("/api/v1/clusters", json={"name": "noted"}).raise_for_status()
            made = c.post("/api/v1/auth/tokens", json={"name": "deploys"})
            made.raise_for_status()
            token = made.json()["token"]
        noted = lagscope(
            {**env, "LAGSCOPE_TOKEN": token},
            "annotate",
            "deploy 42",
            "--cluster",
            "noted",
            "--tag",
            "deploy",
            "--at",
            "2026-01-02T03:04:05Z",
            "--url",
            api.url,
        )
        assert noted.returncode == 0, noted.stderr
        answer = json.loads(noted.stdout)
        with api.client() as c:
            stored = c.get(f"/api/v1/annotations/{answer['id']}").json()
        assert stored["text"] == "deploy 42" and "deploy" in stored["tags"]
        assert stored["starts_at"].startswith("2026-01-02T03:04:05")
        refused = lagscope(
            {**env, "LAGSCOPE_TOKEN": "not-a-token"},
            "annotate",
            "x",
            "--cluster",
            "noted",
            "--url",
            api.url,
        )
        assert refused.returncode == 1 and "refused (401)" in refused.stderr


def health(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = lagscope(env, "health", *args)
    return done.returncode, json.loads(done.stdout)


def test_health_judges_the_store_and_the_broker(env: dict[str, str]):
    """No worker or beat has ever run on this store: they are down, and the status says so;
    the store and the broker alone are up."""
    done = lagscope(env, "health")
    report = json.loads(done.stdout)
    states = {c["name"]: c["state"] for c in report["components"]}
    assert {"store", "broker", "workers", "beat", "polling", "deliveries"} <= set(states)
    assert states["store"] == "ok" and states["broker"] == "ok"
    assert states["workers"] == "down" and report["state"] == "down"
    assert done.returncode == 1 and "lagscope health: down: " in done.stderr
    assert "workers" in done.stderr.split("down: ", 1)[1]
    status, _ = health(env, "--check", "store", "--check", "broker")
    assert status == 0


def started(env: dict[str, str], workdir: Path, name: str, *args: str) -> ManagedProcess:
    return ManagedProcess(f"cli-{name}", [LAGSCOPE, name, *args], workdir, env)


def reported(env: dict[str, str], kind: str) -> bool:
    return lagscope(env, "health", "--check", "store", "--process", kind).returncode == 0


@pytest.mark.parametrize(
    ("kind", "args"),
    [
        ("worker", ("--concurrency", "1", "--without-gossip", "--without-mingle")),
        ("beat", ("-s", "cli-beat-schedule")),
        ("heartbeat", ("--refresh", "1")),
    ],
)
def test_the_long_running_commands_start_and_report_themselves(
    env: dict[str, str], workdir: Path, kind: str, args: tuple[str, ...]
):
    assert not reported(env, kind)
    process = started(env, workdir, kind, *args)
    try:
        wait_until(
            lambda: reported(env, kind) or not process.alive(),
            timeout_s=90,
            interval_s=1,
            message=f"`lagscope {kind}` reported in the store",
        )
        assert process.alive(), process.log_tail()
    finally:
        process.stop(grace_s=20)
    assert process.proc.returncode in (0, -15), process.log_tail()


def test_api_serves(env: dict[str, str], workdir: Path):
    port = free_port()
    process = started(env, workdir, "api", "--port", str(port))
    try:
        ready = wait_until(
            lambda: httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5),
            timeout_s=60,
            interval_s=0.5,
            message="`lagscope api` answering",
            ignore=(httpx.TransportError,),
        )
        assert {c["name"] for c in ready.json()["components"]} >= {"store", "broker"}
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/clusters", timeout=5).status_code == 401
    finally:
        process.stop()


def test_lab_status_describes_the_running_lab(lab, env: dict[str, str]):
    shown = lagscope(env, "lab", "status", "--state", str(lab.state_path))
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    text = json.dumps(status)
    for server in lab.servers:
        assert str(server.port) in text and server.name in text
