"""Alembic environment: URL from ``-x url=…`` or LAGSCOPE_DATABASE_URL; metadata from the models."""

from __future__ import annotations

import os
from typing import Any

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.types import TypeDecorator

from lagscope.db import make_engine
from lagscope.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url: str | None = context.get_x_argument(as_dictionary=True).get("url")
    return (
        url
        or config.attributes.get("url")
        or os.environ.get("LAGSCOPE_DATABASE_URL", "sqlite:///./lagscope.db")
    )


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | bool:
    """Render our TypeDecorators as their plain column types: a migration must not depend on
    application code that may change after it was written."""
    if type_ == "type" and isinstance(obj, TypeDecorator):
        impl = obj.impl if not isinstance(obj.impl, type) else obj.impl()
        return f"sa.{impl!r}"
    return False


def _partitions(connection: Connection) -> frozenset[str]:
    """PostgreSQL's partitions of our day-partitioned raw tables (migration prt20a000001): the
    catalog lists each as a table, which the models rightly do not declare."""
    if connection.dialect.name != "postgresql":
        return frozenset()
    found = connection.scalars(
        text(
            "SELECT relname FROM pg_class WHERE relispartition "
            "AND relnamespace = CAST(current_schema() AS regnamespace)"
        )
    )
    names = frozenset(found)
    connection.commit()  # end the transaction the read began: Alembic begins its own
    return names


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        partitions = _partitions(connection)

        def include_name(name: str | None, type_: str, _parents: object) -> bool:
            return not (type_ == "table" and name in partitions)

        # SQLite cannot ALTER most things in place: batch mode rebuilds tables instead.
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
            render_item=render_item,
            include_name=include_name,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
