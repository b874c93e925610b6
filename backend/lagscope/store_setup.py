"""Bring a store's schema up to date with Alembic, from code (``lagscope migrate``, tests, demo)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from lagscope.config import get_settings

_ROOT = Path(__file__).resolve().parents[2]


def alembic_config(url: str | None = None) -> Config:
    config = Config(str(_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(_ROOT / "migrations"))
    config.cmd_opts = None
    config.attributes["url"] = url or get_settings().database_url
    return config


def upgrade(url: str | None = None, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)
