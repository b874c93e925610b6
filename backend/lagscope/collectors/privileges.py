"""Which of the monitoring privileges the connected user has (docs/replication.md, "Privileges").

SQL: ``SHOW GRANTS`` (the current user). Global grants are read from the ``ON *.*`` lines;
``SELECT`` on performance_schema from a ``performance_schema.*`` (or ``*.*``) line.
MariaDB spells REPLICA MONITOR as SLAVE MONITOR in SHOW GRANTS; both are accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lagscope.collectors.executor import ResultSet
from lagscope.collectors.values import as_text

STATEMENT = "SHOW GRANTS"

# What Lagscope's monitoring user needs, per product, and what each is for.
NEEDED: dict[str, tuple[tuple[str, str], ...]] = {
    "mariadb": (
        ("REPLICA MONITOR", "SHOW ALL SLAVES STATUS"),
        ("BINLOG MONITOR", "SHOW MASTER STATUS"),
        ("PROCESS", "applier worker threads"),
    ),
    "mysql": (
        ("REPLICATION CLIENT", "SHOW REPLICA STATUS / SHOW BINARY LOG STATUS"),
        ("PROCESS", "applier threads"),
        ("SELECT ON performance_schema.*", "applier timestamps, variables, status"),
    ),
}
_ALIASES = {"SLAVE MONITOR": "REPLICA MONITOR", "REPLICATION SLAVE ADMIN": "REPLICA MONITOR"}
_GRANT = re.compile(r"^GRANT (?P<privs>.+?) ON (?P<on>\S+) TO ", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PrivilegeReport:
    found: tuple[str, ...]
    missing: tuple[str, ...]
    # Privileges beyond read-only monitoring (worth telling the operator).
    excessive: tuple[str, ...]


def parse(product: Literal["mysql", "mariadb"], result: ResultSet) -> PrivilegeReport:
    global_privs: set[str] = set()
    schema_select = False
    for row in result.rows:
        match = _GRANT.match(as_text(row[0]))
        if match is None:
            continue
        on = match.group("on").replace("`", "").lower()
        privs = {
            _ALIASES.get(p.strip().upper(), p.strip().upper())
            for p in match.group("privs").split(",")
        }
        if on == "*.*":
            global_privs |= privs
        if on in ("*.*", "performance_schema.*") and ({"SELECT", "ALL PRIVILEGES"} & privs):
            schema_select = True
    everything = "ALL PRIVILEGES" in global_privs or "SUPER" in global_privs
    found: list[str] = []
    missing: list[str] = []
    for name, _why in NEEDED[product]:
        held = everything or (
            schema_select if name.startswith("SELECT ON") else name in global_privs
        )
        (found if held else missing).append(name)
    excessive = sorted(
        p
        for p in global_privs
        if p in {"ALL PRIVILEGES", "SUPER", "INSERT", "UPDATE", "DELETE", "DROP"}
    )
    return PrivilegeReport(tuple(found), tuple(missing), tuple(excessive))
