"""Which replicas to offer when a cluster's replicas are discovered from its source: pure, from
what the source says (collectors/discovery.py) and the instances the cluster already has.

Registered replicas come with their reported address; binlog dump sessions only with a peer
address, so their port is left unreported (never guessed), and a proposal already monitored is
marked so rather than offered twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lagscope.collectors.discovery import SourceView

SeenAs = Literal["registered", "dump_session"]


@dataclass(frozen=True, slots=True)
class Known:
    """An instance the cluster already has, as dedupe compares it."""

    name: str
    host: str
    port: int
    server_id: int | None
    role: str = "replica"


@dataclass(frozen=True, slots=True)
class Proposal:
    """A replica to offer; ``port`` None when the source did not report it (never guessed)."""

    host: str
    port: int | None
    server_id: int | None
    server_uuid: str | None
    seen_as: SeenAs
    monitored_as: str | None
    suggested_name: str


def same_host(a: str, b: str) -> bool:
    """Host names compared as a person reads them: case and surrounding blanks aside."""
    return a.strip().lower() == b.strip().lower()


def _monitored(
    known: Sequence[Known], host: str, port: int | None, server_id: int | None
) -> str | None:
    for k in known:
        if (same_host(k.host, host) and k.port == port) or (
            server_id is not None and k.server_id == server_id
        ):
            return k.name
    return None


def propose(view: SourceView, known: Sequence[Known]) -> list[Proposal]:
    """The replicas to offer, in the source's order: registered ones first (their reported
    address), then addresses seen only as binlog dump sessions (their port unknown).

    - A registered replica is *already monitored* when an instance has its host and port, or
      its server id; the source itself (its own server id) is never offered.
    - Dump sessions are what registered replicas do too, under the peer address (which may be
      a proxy, or an IP where the replica reported a name): only sessions beyond the number of
      registered replicas with a host can belong to unregistered ones, and only those from
      addresses no registered replica reported are offered.
    - A proposal without a port is *already monitored* when an instance has its server id,
      or when the cluster has as many replicas at that host as there are sessions from it
      (the port cannot be compared).
    """
    proposals: list[Proposal] = []
    seen: set[tuple[str, int | None]] = set()
    registered = view.registered or ()
    for row in registered:
        if not row.host or row.server_id == view.server_id:
            continue
        port = row.port or None
        if (row.host.lower(), port) in seen:
            continue
        seen.add((row.host.lower(), port))
        proposals.append(
            Proposal(
                host=row.host,
                port=port,
                server_id=row.server_id,
                server_uuid=row.server_uuid,
                seen_as="registered",
                monitored_as=_monitored(known, row.host, port, row.server_id),
                suggested_name="",
            )
        )
    proposals += _from_sessions(view, known)
    return _named(proposals, [k.name for k in known])


def _from_sessions(view: SourceView, known: Sequence[Known]) -> list[Proposal]:
    registered = view.registered or ()
    with_host = [r for r in registered if r.host]
    spare = len(view.sessions) - len(with_host)
    if spare <= 0:
        return []
    reported = Counter(r.host.lower() for r in with_host)
    per_address = Counter(s.address.lower() for s in view.sessions)
    first = {s.address.lower(): s.address for s in reversed(view.sessions)}
    hostless = [r for r in registered if not r.host and r.server_id != view.server_id]
    out: list[Proposal] = []
    for key, count in per_address.items():
        if key in reported or len(out) >= spare:
            continue
        replicas_here = [k for k in known if k.role != "source" and same_host(k.host, first[key])]
        server_id = hostless[0].server_id if len(hostless) == 1 and spare == 1 else None
        out.append(
            Proposal(
                host=first[key],
                port=None,
                server_id=server_id,
                server_uuid=hostless[0].server_uuid if server_id is not None else None,
                seen_as="dump_session",
                monitored_as=replicas_here[0].name if len(replicas_here) >= count else None,
                suggested_name="",
            )
        )
    return out


def _named(proposals: list[Proposal], taken: Sequence[str]) -> list[Proposal]:
    """A name each, unique in the cluster: ``replica-<server_id>``, else after the host."""
    used = set(taken)
    named = []
    for p in proposals:
        base = f"replica-{p.server_id}" if p.server_id is not None else f"replica-{p.host}"
        name, n = base[:128], 2
        while name in used:
            name, n = f"{base[:120]}-{n}", n + 1
        used.add(name)
        named.append(
            Proposal(
                p.host,
                p.port,
                p.server_id,
                p.server_uuid,
                p.seen_as,
                p.monitored_as,
                name,
            )
        )
    return named
