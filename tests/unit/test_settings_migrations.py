"""Settings refuse unsafe defaults; the Alembic environment runs and matches the models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from lagscope.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_placeholder_secret_refused_outside_demo(monkeypatch):
    monkeypatch.delenv("LAGSCOPE_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="LAGSCOPE_SECRET_KEY"):
        Settings(demo=False)
    assert Settings(demo=True).demo


def test_database_url_shorthands_are_normalised():
    s = Settings(demo=True, database_url="postgres://u@h/db")
    assert s.database_url == "postgresql+psycopg://u@h/db"
    assert (
        Settings(demo=True, database_url=" mysql://u@h/db").database_url == "mysql+pymysql://u@h/db"
    )


def alembic(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alembic", "-x", f"url={url}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_alembic_upgrade_and_check_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade = alembic("upgrade", "head", url=url)
    assert upgrade.returncode == 0, upgrade.stderr
    check = alembic("check", url=url)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "No new upgrade operations detected" in check.stdout + check.stderr
    down = alembic("downgrade", "base", url=url)
    assert down.returncode == 0, down.stderr
    again = alembic("upgrade", "head", url=url)
    assert again.returncode == 0, again.stderr
