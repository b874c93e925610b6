"""`lagscope import` run as the real command on a file written by someone else: it reads no
variable outside LAGSCOPE_IMPORT_…, no file outside LAGSCOPE_PASSWORD_FILE_DIR, and refuses a
YAML alias bomb before expanding it; nothing is written, nothing secret is printed."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from lagscope.config import generate_key
from lagscope.store_setup import upgrade
from tests.unit.inventory.test_import_sources import ALIAS_BOMB

from .test_cli_import import count

pytestmark = pytest.mark.integration

KEY = generate_key()
FILE = """\
clusters:
  - name: shop
    instances:
      - name: db1
        host: 127.0.0.1
        port: 3306
        user: mon
        role: source
        {source}
"""
# The reader's memory, bounded: the old loader expanded the bomb to 2.3 GB before failing.
MEMORY_CAP = 1536 * 1024 * 1024


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    return url


def run_import(url: str, file: Path, secrets_dir: Path) -> subprocess.CompletedProcess[str]:
    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    done = subprocess.run(
        [sys.executable, "-m", "lagscope", "import", str(file)],
        env={
            **os.environ,
            "LAGSCOPE_DATABASE_URL": url,
            "LAGSCOPE_SECRET_KEY": KEY,
            "LAGSCOPE_PASSWORD_FILE_DIR": str(secrets_dir),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=cap_memory,
    )
    assert KEY not in done.stdout + done.stderr
    return done


@pytest.fixture
def secrets_dir(tmp_path: Path) -> Path:
    inside = tmp_path / "secrets"
    inside.mkdir()
    (tmp_path / "elsewhere.pw").write_text("not-for-import\n")
    (inside / "escape").symlink_to(tmp_path / "elsewhere.pw")
    return inside


def test_the_secret_key_is_never_read_as_a_password(
    store: str, tmp_path: Path, secrets_dir: Path
) -> None:
    file = tmp_path / "inventory.yaml"
    file.write_text(FILE.format(source="password_env: LAGSCOPE_SECRET_KEY"))
    done = run_import(store, file, secrets_dir)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "clusters[0].instances[0]" in done.stderr
    assert "password_env: LAGSCOPE_SECRET_KEY is not read" in done.stderr
    assert "LAGSCOPE_IMPORT_" in done.stderr
    assert count(store) == 0


@pytest.mark.parametrize("target", ["escape", "../elsewhere.pw"])
def test_a_password_file_outside_the_directory_is_never_read(
    store: str, tmp_path: Path, secrets_dir: Path, target: str
) -> None:
    file = tmp_path / "inventory.yaml"
    file.write_text(FILE.format(source=f"password_file: {secrets_dir / target}"))
    done = run_import(store, file, secrets_dir)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "password files must be inside" in done.stderr
    assert "not-for-import" not in done.stdout + done.stderr
    assert count(store) == 0


def test_an_alias_bomb_is_refused_before_it_expands(
    store: str, tmp_path: Path, secrets_dir: Path
) -> None:
    file = tmp_path / "bomb.yaml"
    file.write_text(ALIAS_BOMB)
    done = run_import(store, file, secrets_dir)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "bomb.yaml: line 1 column 4: an anchor (&name)" in done.stderr
    assert "MemoryError" not in done.stderr
    assert count(store) == 0
