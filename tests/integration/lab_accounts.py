"""Lab accounts beyond the lab's own: one that may discover replicas.

The lab's ``monitor`` account is the read-only monitoring user of README's grants; replica
discovery needs more on the source (``REPLICATION MASTER ADMIN`` on MariaDB, docs/security.md),
so tests that discover use this account. Made on the source with the binary log on, so it
replicates and logs in on the replicas too ("same login as the source")."""

from __future__ import annotations

import secrets

DISCOVERER = "discoverer"


def discovery_account(lab, wait_s: float = 60.0) -> tuple[str, str]:
    """(user, password) of a monitoring account that may also run SHOW SLAVE HOSTS; a new
    password each call, on every lab server once this returns."""
    password = secrets.token_urlsafe(18)
    admin = lab.connect("source")
    try:
        with admin.cursor() as cur:
            cur.execute(f"CREATE OR REPLACE USER '{DISCOVERER}'@'%%' IDENTIFIED BY %s", (password,))
            cur.execute(
                "GRANT BINLOG MONITOR, REPLICA MONITOR, PROCESS, REPLICATION MASTER ADMIN "
                f"ON *.* TO '{DISCOVERER}'@'%'"
            )
            cur.execute(f"GRANT SELECT ON performance_schema.* TO '{DISCOVERER}'@'%'")
    finally:
        admin.close()
    lab.wait_caught_up(timeout_s=wait_s)
    return DISCOVERER, password
