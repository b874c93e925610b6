"""`lagscope import FILE` against real stores (SQLite and a throwaway PostgreSQL), run as the
real command: applied twice it changes nothing the second time and says so; --dry-run writes
nothing; a malformed file, or a refusal half-way through, writes nothing either."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from lagscope.config import generate_key
from lagscope.db import make_engine, make_session_factory
from lagscope.models import Cluster, Instance
from lagscope.security.secret_box import store_box
from lagscope.store_setup import upgrade

from .postgres import ThrowawayPostgres

pytestmark = pytest.mark.integration

KEY = generate_key()
DB1_PASSWORD = "db1-file-secret-7"
HB_PASSWORD = "hb-env-secret-3"
DB2_PASSWORD = "db2-inline-secret-9"

FILE = """\
clusters:
  - name: shop
    poll_interval_s: 2
    extra_params: [max_connections]
    heartbeat:
      mode: lagscope
      user: hb
      password_env: LAGSCOPE_IMPORT_TEST_HB
    instances:
      - name: db1
        host: 10.0.0.5
        user: lagscope
        password_file: {pw_file}
        role: source
        region: eu
      - name: db2
        host: 10.0.0.6
        port: 3307
        user: lagscope
        password: {db2}
        tls: required
  - name: billing
    instances:
      - name: b1
        host: 10.1.0.5
        user: lagscope
        role: source
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        server: ThrowawayPostgres = request.getfixturevalue("postgres")
        url = server.new_database("import")
    upgrade(url)
    return url


def write(tmp_path: Path, text: str, name: str = "inventory.yaml", fill: bool = True) -> Path:
    (tmp_path / "db1.pw").write_text(DB1_PASSWORD + "\n")
    path = tmp_path / name
    path.write_text(text.format(pw_file=tmp_path / "db1.pw", db2=DB2_PASSWORD) if fill else text)
    return path


def lagscope_import(url: str, *args: object, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "lagscope", "import", *map(str, args)],
        env={
            **os.environ,
            "LAGSCOPE_DATABASE_URL": url,
            "LAGSCOPE_SECRET_KEY": KEY,
            "LAGSCOPE_IMPORT_TEST_HB": HB_PASSWORD,
            # The password files are the test's own: its file (inventory.yaml) is their sibling.
            "LAGSCOPE_PASSWORD_FILE_DIR": next(
                (str(Path(str(a)).parent) for a in args if isinstance(a, Path)), ""
            ),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    for secret in (DB1_PASSWORD, DB2_PASSWORD, HB_PASSWORD):
        assert secret not in done.stdout + done.stderr
    return done


def rows(url: str) -> dict[str, tuple[object, ...]]:
    """Every cluster and instance as stored (passwords decrypted), by name."""
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    box = store_box(sessions, KEY)
    try:
        with sessions() as session:
            found: dict[str, tuple[object, ...]] = {}
            for c in session.scalars(select(Cluster)):
                hb = box.decrypt(c.heartbeat_password_enc) if c.heartbeat_password_enc else None
                found[c.name] = (c.poll_interval_s, c.extra_params, c.heartbeat_mode, hb)
                for i in c.instances:
                    found[f"{c.name}/{i.name}"] = (
                        i.host,
                        i.port,
                        i.user,
                        box.decrypt(i.password_enc),
                        i.role,
                        i.region,
                        i.tls,
                    )
            return found
    finally:
        engine.dispose()


def count(url: str) -> int:
    engine = make_engine(url)
    try:
        with make_session_factory(engine)() as session:
            return int(session.scalar(select(func.count()).select_from(Instance)) or 0) + int(
                session.scalar(select(func.count()).select_from(Cluster)) or 0
            )
    finally:
        engine.dispose()


def test_applied_twice_the_second_run_changes_nothing(store: str, tmp_path: Path):
    path = write(tmp_path, FILE)
    first = lagscope_import(store, path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1] == "5 created, 0 changed, 0 unchanged"
    stored = rows(store)
    assert stored == {
        "shop": (2.0, ["max_connections"], "lagscope", HB_PASSWORD),
        "shop/db1": ("10.0.0.5", 3306, "lagscope", DB1_PASSWORD, "source", "eu", "preferred"),
        "shop/db2": ("10.0.0.6", 3307, "lagscope", DB2_PASSWORD, "replica", "", "required"),
        "billing": (1.0, [], "off", None),
        "billing/b1": ("10.1.0.5", 3306, "lagscope", "", "source", "", "preferred"),
    }

    second = lagscope_import(store, path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[-1] == "0 created, 0 changed, 5 unchanged"
    assert rows(store) == stored

    # One password and one port changed: exactly those are reported and written.
    (tmp_path / "db1.pw").write_text("rotated-pw-1\n")
    moved = FILE.replace("port: 3307", "port: 3308").replace("{pw_file}", str(tmp_path / "db1.pw"))
    (tmp_path / "moved.yaml").write_text(moved.format(db2=DB2_PASSWORD))
    third = lagscope_import(store, tmp_path / "moved.yaml")
    assert third.returncode == 0, third.stderr
    assert "instance shop/db1: changed (password)" in third.stdout
    assert "instance shop/db2: changed (port, password)" not in third.stdout
    assert "instance shop/db2: changed (port)" in third.stdout
    assert third.stdout.splitlines()[-1] == "0 created, 2 changed, 3 unchanged"
    assert rows(store)["shop/db1"][3] == "rotated-pw-1"


def test_dry_run_prints_the_changes_and_writes_nothing(store: str, tmp_path: Path):
    path = write(tmp_path, FILE)
    dry = lagscope_import(store, "--dry-run", path)
    assert dry.returncode == 0, dry.stderr
    assert "instance shop/db2: created" in dry.stdout
    assert dry.stdout.splitlines()[-1] == (
        "5 created, 0 changed, 0 unchanged (dry run: nothing written)"
    )
    assert count(store) == 0


def test_a_malformed_file_names_the_line_and_writes_nothing(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    broken = FILE.replace("port: 3307", "port: 70000").replace(
        "region: eu", "region: eu\n        colour: red"
    )
    bad = lagscope_import(url, write(tmp_path, broken))
    assert bad.returncode == 2
    lines = broken.splitlines()
    port_line = next(n for n, text in enumerate(lines, 1) if "70000" in text)
    colour_line = next(n for n, text in enumerate(lines, 1) if "colour" in text)
    assert f"clusters[0].instances[1].port (line {port_line})" in bad.stderr
    assert f"clusters[0].instances[0].colour (line {colour_line})" in bad.stderr
    syntax = lagscope_import(
        url, write(tmp_path, "clusters:\n  - name: x\n   bad: [", "syntax.yaml")
    )
    assert syntax.returncode == 2 and "line 3" in syntax.stderr
    json_file = write(tmp_path, '{"clusters": [\n  {"name": "a",}\n]}', "broken.json", fill=False)
    as_json = lagscope_import(url, json_file)
    assert as_json.returncode == 2 and "line 2" in as_json.stderr
    unset = FILE.replace("LAGSCOPE_IMPORT_TEST_HB", "LAGSCOPE_IMPORT_TEST_UNSET")
    no_env = lagscope_import(url, write(tmp_path, unset, "unset.yaml"))
    assert no_env.returncode == 2
    assert (
        "clusters[0].heartbeat (line 5): password_env: the variable LAGSCOPE_IMPORT_TEST_UNSET"
        in (no_env.stderr)
    )
    assert count(url) == 0


def test_a_refusal_half_way_writes_nothing(tmp_path: Path):
    """billing's instance is outside LAGSCOPE_ALLOWED_TARGETS: shop (before it in the file)
    is not written either — one transaction."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    refused = lagscope_import(url, write(tmp_path, FILE), LAGSCOPE_ALLOWED_TARGETS="10.0.0.0/24")
    assert refused.returncode == 2
    assert "clusters[1].instances[0] (instance billing/b1)" in refused.stderr
    assert "LAGSCOPE_ALLOWED_TARGETS" in refused.stderr
    assert count(url) == 0

    # A move without the password is refused as the API refuses it, naming the item.
    assert lagscope_import(url, write(tmp_path, FILE)).returncode == 0
    no_password = FILE.replace("        password: {db2}\n", "").replace("port: 3307", "port: 3309")
    moved = lagscope_import(url, write(tmp_path, no_password, "moved.yaml"))
    assert moved.returncode == 2
    assert "clusters[0].instances[1] (instance shop/db2)" in moved.stderr
    assert "needs the password again" in moved.stderr
    assert rows(url)["shop/db2"][1] == 3307
