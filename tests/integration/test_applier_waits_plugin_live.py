"""With MariaDB's METADATA_LOCK_INFO plugin, the backup lock's holder is named exactly on the
live lab: the session holding FLUSH TABLES WITH READ LOCK or a BACKUP STAGE, not candidates.

A module of its own: the plugin is installed on the replica before this module's pipeline
connects (each connection asks once whether the plugin answers), and removed after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pymysql
import pytest

from lagscope.lab import Lab

from .pipeline_stack import Pipeline
from .test_applier_waits_live import LOCKS, REPLICA, name_lock, quiet_lab  # noqa: F401 - fixture
from .test_causes_named_live import EVIDENCE_TARGET_POLLS

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", autouse=True)
def metadata_lock_info(lab: Lab) -> Iterator[None]:
    with lab.connect(REPLICA) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT COUNT(*) FROM information_schema.PLUGINS "
            "WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'"
        )
        row = cur.fetchone()
        installed = bool(row and row[0])
        if not installed:
            cur.execute("INSTALL SONAME 'metadata_lock_info'")
    yield
    if not installed:
        with (
            contextlib.suppress(pymysql.err.MySQLError),
            lab.connect(REPLICA) as conn,
            conn.cursor() as cur,
        ):
            cur.execute("UNINSTALL SONAME 'metadata_lock_info'")


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_the_plugin_names_the_backup_locks_holder_exactly(
    lab: Lab, pipeline: Pipeline, lock: str
) -> None:
    # name_lock waits until the blocker named is the session holding the lock. A connection asks
    # whether the plugin answers in its first poll behind and reads the holders from its next
    # one; the pipeline's two workers each have their own: up to two polls more than the
    # candidates take (measured: 6 polls for the first lock of the module, 2 for the next).
    naming, _ = name_lock(lab, pipeline, lock, exact=True, target_polls=EVIDENCE_TARGET_POLLS + 2)
    assert "held by session" in naming.sentence and "likely" not in naming.sentence
    assert "candidates" not in naming.evidence
