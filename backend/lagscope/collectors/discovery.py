"""The replicas a source knows of: the ones registered with it, and its binlog dump sessions.

SQL, on the source (by dialect, ``Dialect.replica_hosts_sql`` and ``processlist_table``):

- ``SELECT @@global.server_id AS server_id, CURRENT_USER() AS account`` — the source's own id
  (never proposed as its own replica) and the account, to name it in a ``GRANT``.
- ``SHOW SLAVE HOSTS`` (MariaDB, MySQL < 8.0.22) or ``SHOW REPLICAS`` (MySQL ≥ 8.0.22; the old
  name is removed in 8.4). Columns ``Server_id``, ``Host``, ``Port``, ``Master_id`` /
  ``Source_id`` and, on MySQL, ``Slave_UUID`` / ``Replica_UUID``. ``Host`` and ``Port`` are
  what the replica reports (``report_host`` / ``report_port``): the address to reach it by,
  not the one its connection comes from — a replica behind a proxy or NAT reports the address
  users connect to. Without ``report_host`` MariaDB ≥ 10.5.1 fills ``Host`` from the
  connection's peer; MySQL leaves it empty. ``Port`` 0 means unreported.
  Needs ``REPLICATION MASTER ADMIN`` on MariaDB ≥ 10.5.2 (``REPLICATION SLAVE`` before),
  ``REPLICATION SLAVE`` on MySQL (MariaDB KB "SHOW REPLICA HOSTS", MySQL manual "SHOW
  REPLICAS"). Refused, it is reported as a problem naming the grant, not a failure.
- ``SELECT ID, USER, HOST, COMMAND FROM <processlist> WHERE COMMAND IN ('Binlog Dump',
  'Binlog Dump GTID')`` — one session per connected replica (MySQL says ``Binlog Dump GTID``
  for auto-positioned ones). ``HOST`` is ``peer:ephemeral-port``: the peer address is a
  replica's machine (or a proxy in front of it), its listening port is not known. Without
  ``PROCESS`` only the monitoring user's own sessions are listed — silently, no error —
  so ``SHOW GRANTS`` is read to tell "no sessions" from "none visible".

Nothing here decides what to propose: that is inventory/discovery.py's pure ``propose``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.collectors import privileges
from lagscope.collectors.dialect import Dialect, dialect_for
from lagscope.collectors.executor import BatchFailed, Executor, ResultSet
from lagscope.collectors.flavor import FLAVOR_SQL, ServerFlavor, parse_flavor
from lagscope.collectors.values import as_int, as_text
from lagscope.errors import AccessDenied, UnsupportedServer

IDENTITY_SQL = "SELECT @@global.server_id AS server_id, CURRENT_USER() AS account"
DUMP_COMMANDS = ("Binlog Dump", "Binlog Dump GTID")
# What SHOW SLAVE HOSTS / SHOW REPLICAS needs, per product (docs/replication.md, "Privileges").
HOSTS_GRANT = {"mariadb": "REPLICATION MASTER ADMIN", "mysql": "REPLICATION SLAVE"}
HOSTS_GRANT_NOTE = {
    "mariadb": "REPLICATION MASTER ADMIN (MariaDB 10.5.2+; it also allows setting a few "
    "replication variables)",
    "mysql": "REPLICATION SLAVE (it also allows reading the binary log)",
}


@dataclass(frozen=True, slots=True)
class RegisteredReplica:
    """One row of SHOW SLAVE HOSTS / SHOW REPLICAS; ``host`` "" and ``port`` 0 when unreported."""

    server_id: int | None
    host: str
    port: int
    source_server_id: int | None
    server_uuid: str | None


@dataclass(frozen=True, slots=True)
class DumpSession:
    """A binlog dump session: a replica (or another binlog reader) connected from ``address``."""

    thread_id: int | None
    user: str
    address: str


@dataclass(frozen=True, slots=True)
class SourceView:
    """What one source says of its replicas. ``registered`` is None when SHOW SLAVE HOSTS was
    refused; ``problems`` says why in words, with the grant."""

    server: str
    flavor: ServerFlavor
    server_id: int
    registered: tuple[RegisteredReplica, ...] | None
    sessions: tuple[DumpSession, ...]
    problems: tuple[str, ...]


def processlist_statement(dialect: Dialect) -> str:
    commands = ", ".join(f"'{c}'" for c in DUMP_COMMANDS)
    return (
        "SELECT ID AS id, USER AS user, HOST AS host, COMMAND AS command "  # noqa: S608 - constants
        f"FROM {dialect.processlist_table} WHERE COMMAND IN ({commands}) ORDER BY ID"
    )


def parse_registered(result: ResultSet) -> tuple[RegisteredReplica, ...]:
    rows = []
    for row in result.records():
        uuid = as_text(row.get("replica_uuid", row.get("slave_uuid"))).strip()
        rows.append(
            RegisteredReplica(
                server_id=as_int(row.get("server_id")),
                host=as_text(row.get("host")).strip(),
                port=as_int(row.get("port")) or 0,
                source_server_id=as_int(row.get("source_id", row.get("master_id"))),
                server_uuid=uuid or None,
            )
        )
    return tuple(rows)


def peer_address(host: str) -> str | None:
    """The address part of a processlist ``HOST`` (``10.0.0.7:51234`` → ``10.0.0.7``;
    ``[::1]:51234`` and ``::1:51234`` → ``::1``). None for a local socket session (no port):
    that peer is the source's own machine, which says nothing about how to reach it."""
    text = host.strip()
    address, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not address:
        return None
    return address.removeprefix("[").removesuffix("]")


def parse_sessions(result: ResultSet) -> tuple[tuple[DumpSession, ...], int]:
    """The TCP dump sessions, and how many came over a local socket (not proposable)."""
    sessions, local = [], 0
    for row in result.records():
        address = peer_address(as_text(row.get("host")))
        if address is None:
            local += 1
            continue
        sessions.append(DumpSession(as_int(row.get("id")), as_text(row.get("user")), address))
    return tuple(sessions), local


def grant_account(account: str) -> str:
    """``CURRENT_USER()`` (``monitor@%``) as a GRANT names it (``'monitor'@'%'``)."""
    user, _, host = account.rpartition("@")
    return f"'{user}'@'{host}'" if user else "'<monitoring user>'@'<host>'"


def read_source_view(executor: Executor) -> SourceView:
    """Ask the source for its replicas. Raises the collector error of a failed connection,
    and :class:`AccessDenied` naming both grants when the account may see neither the
    registered replicas nor other sessions."""
    flavor_rows = executor.run([FLAVOR_SQL])[0].rows
    flavor = parse_flavor(*(as_text(v) for v in flavor_rows[0])) if flavor_rows else None
    if flavor is None:
        raise UnsupportedServer(executor.server, "cannot read @@version")
    dialect = dialect_for(flavor, executor.server)
    identity, grants = executor.run([IDENTITY_SQL, privileges.STATEMENT])
    row = identity.records()[0]
    account = grant_account(as_text(row.get("account")))
    process = "PROCESS" in privileges.parse(flavor.product, grants).found
    problems: list[str] = []
    registered: tuple[RegisteredReplica, ...] | None
    try:
        registered = parse_registered(executor.run([dialect.replica_hosts_sql])[0])
    except BatchFailed as failed:
        if not isinstance(failed.error, AccessDenied):
            raise failed.error from failed
        registered = None
        grant = HOSTS_GRANT[flavor.product]
        problems.append(
            f"{dialect.replica_hosts_sql} was refused, so replicas' ports and server ids are "
            f"unknown: GRANT {grant} ON *.* TO {account} on the source to see them "
            f"(needs {HOSTS_GRANT_NOTE[flavor.product]})"
        )
    try:
        sessions, local = parse_sessions(executor.run([processlist_statement(dialect)])[0])
    except BatchFailed as failed:
        # performance_schema off on MySQL, or its SELECT not granted: the registered list
        # still stands on its own.
        sessions, local, process = (), 0, False
        problems.append(f"the binlog dump sessions could not be read: {failed.error.detail}")
    if not process:
        if registered is None:
            raise AccessDenied(
                executor.server,
                f"discovering replicas needs {HOSTS_GRANT[flavor.product]} (SHOW SLAVE HOSTS) "
                f"or PROCESS (their binlog dump sessions) on the source: GRANT "
                f"{HOSTS_GRANT[flavor.product]} ON *.* TO {account}",
            )
        if any(not r.host for r in registered):
            problems.append(
                "some replicas report no host, and without PROCESS their sessions are not "
                f"visible: GRANT PROCESS ON *.* TO {account} on the source"
            )
    if local:
        problems.append(
            f"{local} binlog dump session(s) over a local socket (a replica or binlog reader "
            "on the source's own machine) are not proposed"
        )
    return SourceView(
        server=executor.server,
        flavor=flavor,
        server_id=as_int(row.get("server_id")) or 0,
        registered=registered,
        sessions=sessions,
        problems=tuple(problems),
    )
