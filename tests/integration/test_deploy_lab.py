"""The docker-compose lab's files, run where they are flavor-neutral: against MariaDB.

- The my.cnf options both flavors know are read by this machine's ``mariadbd`` (``--help
  --verbose`` parses an option file as a start would, and refuses an unknown option).
- The source's init script runs for real (its ``docker_process_sql`` is a ``mariadb`` client on
  the lab source's socket) with a password full of quotes and backslashes: the accounts exist,
  log in with that password, hold their grants, and the heartbeat table it makes is the lab's.
- ``lagscope scenario`` registers the servers and tells the tuning story against a lab of its
  own, as the ``lab-scenario`` container does against the MySQL lab.
"""

from __future__ import annotations

import configparser
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from sqlalchemy import select

from lagscope.db import make_engine, make_session_factory
from lagscope.lab import Lab, LabConfig
from lagscope.lab.servers import mariadbd_path
from lagscope.models import Annotation, Cluster
from lagscope.store_setup import upgrade

from .waiting import wait_until

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LAB_FILES = ROOT / "deploy" / "lab"
NASTY_PASSWORD = "it's a \\ back'slash\\' pass; -- word"
KEY = "k7Hq2vX9pLm4Rt8Wz3Nc6Bd1Fg5Js0Ya-UeQiOoPx"  # a test store's key, strong enough


def neutral_options(path: Path) -> dict[str, str]:
    from tests.unit.repo.test_deploy_files import MYSQL_ONLY

    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None)
    parser.read(path)
    return {k: v or "" for k, v in parser["mysqld"].items() if k not in MYSQL_ONLY}


@pytest.mark.parametrize("name", ["source.cnf", "replica.cnf"])
def test_neutral_cnf_options_parse_in_mariadbd(tmp_path, name):
    options = neutral_options(LAB_FILES / name)
    assert len(options) >= 5
    cnf = tmp_path / name
    cnf.write_text("[mysqld]\n" + "".join(f"{k} = {v}\n" for k, v in options.items()))
    done = subprocess.run(
        [mariadbd_path(), f"--defaults-file={cnf}", "--help", "--verbose"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shown = {
        line.split()[0]: line.split()[-1]
        for line in done.stdout.splitlines()
        if line and not line[0].isspace() and len(line.split()) >= 2
    }
    for key, value in options.items():
        printed = shown[key.replace("_", "-")]
        expected = {"ON": "TRUE", "128M": str(128 * 1024 * 1024)}.get(value, value)
        assert printed == expected, (key, value, printed)


@pytest.fixture(scope="module")
def own_lab() -> Iterator[Lab]:
    """A lab of this module's own: the scenario below changes the replicas' settings."""
    started = Lab.start(LabConfig(replicas=2, proxied=("replica2",), proxy_delay_s=0.05))
    try:
        yield started
    finally:
        started.stop()


def run_source_init(lab: Lab) -> None:
    """The init script as the mysql image runs it: sourced, with docker_process_sql defined."""
    client = shutil.which("mariadb") or shutil.which("mysql")
    assert client, "the mariadb client is needed"
    script = (
        f'docker_process_sql() {{ "{client}" --no-defaults --socket="{lab.source.socket}" '
        "-uroot; }\n"
        "set -eo pipefail\n"
        f'source "{LAB_FILES / "init-source" / "10-lagscope.sh"}"\n'
    )
    env = {**os.environ, "LAB_PASSWORD": NASTY_PASSWORD, "LAGSCOPE_SQL_DIR": str(LAB_FILES / "sql")}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def show_create_heartbeat(conn: pymysql.Connection) -> str:
    with conn.cursor() as cur:
        cur.execute("SHOW CREATE TABLE lagscope.heartbeat")
        row = cur.fetchone()
    assert row is not None
    return str(row[1])


def grants(conn: pymysql.Connection, user: str) -> str:
    with conn.cursor() as cur:
        cur.execute(f"SHOW GRANTS FOR '{user}'@'%'")
        return " ".join(str(r[0]) for r in cur.fetchall())


def test_source_init_makes_the_accounts_and_the_labs_heartbeat_table(own_lab: Lab):
    with own_lab.connect("source") as admin:
        lab_ddl = show_create_heartbeat(admin)
        with admin.cursor() as cur:
            cur.execute("DROP TABLE lagscope.heartbeat")  # so the script really creates it
    run_source_init(own_lab)
    run_source_init(own_lab)  # idempotent: IF NOT EXISTS throughout
    own_lab.wait_caught_up(timeout_s=60)
    with own_lab.connect("source") as admin:
        assert show_create_heartbeat(admin) == lab_ddl
        assert "REPLICATION SLAVE" in grants(admin, "lagscope_repl")
        monitor = grants(admin, "lagscope_monitor")
        # MariaDB reads MySQL's REPLICATION CLIENT as BINLOG MONITOR (README: grants per flavor).
        assert "BINLOG MONITOR" in monitor and "PROCESS" in monitor
        assert "SELECT ON `performance_schema`.*" in monitor
        assert "SELECT ON `lagscope`.*" in monitor
        assert "INSERT, UPDATE" in grants(admin, "lagscope_heartbeat")
    server = own_lab.server("source")
    login = {"host": server.host, "port": server.port, "password": NASTY_PASSWORD}
    with (
        pymysql.connect(user="lagscope_heartbeat", autocommit=True, **login) as writer,
        writer.cursor() as cur,
    ):
        cur.execute(
            "INSERT INTO lagscope.heartbeat (server_id, ts) VALUES (1, NOW(6))"
            " ON DUPLICATE KEY UPDATE ts = NOW(6)"
        )
    own_lab.wait_caught_up(timeout_s=60)
    replica = own_lab.server("replica1")
    with (
        pymysql.connect(
            user="lagscope_monitor", host=replica.host, port=replica.port, password=NASTY_PASSWORD
        ) as monitor_conn,
        monitor_conn.cursor() as cur,
    ):
        cur.execute("SELECT server_id FROM lagscope.heartbeat")
        assert cur.fetchall() == ((1,),)  # written on the source, read on a replica


def test_lagscope_scenario_registers_the_servers_and_tells_the_story(own_lab: Lab, tmp_path):
    run_source_init(own_lab)
    own_lab.wait_caught_up(timeout_s=60)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    admin_user, admin_password = own_lab.credentials.admin
    servers = {name: own_lab.server(name) for name in ("source", "replica1", "replica2")}
    argv = [sys.executable, "-m", "lagscope", "scenario", "--cluster", "lab"]
    argv += [f"--source=source=127.0.0.1:{servers['source'].port}@near"]
    argv += [f"--replica=replica1=127.0.0.1:{servers['replica1'].port}@near"]
    argv += [f"--replica=replica2=127.0.0.1:{servers['replica2'].port}@far"]
    argv += ["--admin-user", admin_user, "--phase-seconds", "8", "--load-tps", "300"]
    env = {
        **os.environ,
        "LAGSCOPE_DATABASE_URL": url,
        "LAGSCOPE_SECRET_KEY": KEY,
        "LAGSCOPE_SCENARIO_ADMIN_PASSWORD": admin_password,
        "LAGSCOPE_SCENARIO_MONITOR_PASSWORD": NASTY_PASSWORD,
        "LAGSCOPE_SCENARIO_HEARTBEAT_PASSWORD": NASTY_PASSWORD,
    }
    log_path = tmp_path / "scenario.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    sessions = make_session_factory(make_engine(url))

    def notes() -> list[str]:
        assert proc.poll() is None, log_path.read_text()
        with sessions() as session:
            return [a.text for a in session.scalars(select(Annotation))]

    try:
        wait_until(
            lambda: any(n.startswith("phase C:") for n in notes()),
            timeout_s=180,
            interval_s=0.5,
            message="the scenario to reach phase C",
        )

        def replica_settled(name: str) -> bool:
            with own_lab.connect(name) as conn, conn.cursor() as cur:
                cur.execute(
                    "SELECT @@global.slave_parallel_threads, @@global.sync_binlog,"
                    " @@global.innodb_flush_log_at_trx_commit"
                )
                return cur.fetchone() == (4, 0, 2)

        for replica in ("replica1", "replica2"):
            wait_until(lambda r=replica: replica_settled(r), timeout_s=60, message=replica)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert proc.returncode == 0, log_path.read_text()
    log = log_path.read_text()
    assert "mariadb replicas" in log
    assert "scenario: phase A (strict durability" in log  # figures (none polled: n/a)
    with sessions() as session:
        cluster = session.scalar(select(Cluster).where(Cluster.name == "lab"))
        assert cluster is not None and cluster.heartbeat_mode == "lagscope"
        by_name = {i.name: i for i in cluster.instances}
        assert {n: (i.role, i.region, i.user) for n, i in by_name.items()} == {
            "source": ("source", "near", "lagscope_monitor"),
            "replica1": ("replica", "near", "lagscope_monitor"),
            "replica2": ("replica", "far", "lagscope_monitor"),
        }
        texts = sorted(a.text[:7] for a in session.scalars(select(Annotation)))
        assert texts == ["phase A", "phase B", "phase C"]
    # The replicas' settings as the lab had them, for whoever uses this lab next.
    for replica in ("replica1", "replica2"):
        with own_lab.connect(replica) as conn, conn.cursor() as cur:
            cur.execute("STOP SLAVE SQL_THREAD")
            cur.execute("SET GLOBAL slave_parallel_threads = 0")
            cur.execute("START SLAVE SQL_THREAD")
