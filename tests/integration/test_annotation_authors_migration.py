"""Migration acc17a000001: annotations get their author's user id, matched
on the exact username only; a note whose author was deleted stays nobody's."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from lagscope.db import make_engine
from lagscope.store_setup import upgrade

pytestmark = pytest.mark.integration

# The revision acc17a000001 upgrades from (read from the migration, so a re-chained history
# still tests the step itself).
BEFORE = next(
    line.split('"')[1]
    for path in (Path(__file__).parents[2] / "migrations" / "versions").glob("*acc17a000001*.py")
    for line in path.read_text(encoding="utf-8").splitlines()
    if line.startswith("down_revision")
)


def test_backfill_matches_the_exact_username_only(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url, BEFORE)
    engine = make_engine(url)
    with engine.begin() as db:
        # Plain SQL, not the ORM: the models are the head's, and later migrations add columns
        # the store at BEFORE does not have yet.
        db.execute(
            text(
                "INSERT INTO clusters (id, name, poll_interval_s, extra_params, heartbeat_mode, "
                "heartbeat_schema, heartbeat_table, heartbeat_interval_s, enabled, created_at) "
                "VALUES (1, 'c', 1.0, '[]', 'off', 'lagscope', 'heartbeat', 0.25, 1, 0)"
            )
        )
        db.execute(
            text(
                "INSERT INTO users (id, username, password_hash, role, disabled, created_at) "
                "VALUES (7, 'ALICE', 'x', 'editor', 0, 0), (8, 'bob', 'x', 'editor', 0, 0)"
            )
        )
        db.execute(
            text(
                "INSERT INTO annotations (id, cluster_id, starts_at, text, tags, author, "
                "created_at) VALUES (1, 1, 0, 'by a deleted alice', '[]', 'alice', 0), "
                "(2, 1, 0, 'by bob', '[]', 'bob', 0), (3, 1, 0, 'by ALICE', '[]', 'ALICE', 0)"
            )
        )
        db.execute(
            text(
                "INSERT INTO login_throttles (key, failures, updated_at) "
                "VALUES ('user:admin', 9, 0), ('addr:127.0.0.9', 9, 0)"
            )
        )
    upgrade(url)
    with engine.connect() as db:
        owners = dict(db.execute(text("SELECT id, author_id FROM annotations")).all())
        keys = set(db.scalars(text("SELECT key FROM login_throttles")))
    engine.dispose()
    assert owners == {1: None, 2: 8, 3: 7}
    assert keys == {"addr:127.0.0.9"}  # a lock on a username alone is gone
