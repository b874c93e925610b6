"""Discovering a cluster's replicas from its source, and adding one with the source's login.

Which replicas to offer is a pure decision (inventory/discovery_proposals.py); this is the
service around it, in three steps so that no database transaction stays open while a server is
waited on (the API runs step 2 in its connection-test pool):

1. :func:`discovery_target` (short transaction): the source's connection spec — its own stored
   login, used for the source only — and the instances already known;
2. :func:`discover` (no transaction): one connection to the source, the proposals;
3. for "same login as the source", :func:`add_with_source_login` (short transaction): the
   operator must have confirmed that very ``host:port`` (the dialog lists where the source's
   login would go and asks), the source must report it now with that port (discovered again
   in step 2, so an editor cannot point the source's password at a host or port of their
   choosing — a port the source does not report is refused, not guessed), the source must be
   the one step 1 read, and the allow-list applies as for any new instance
   (:func:`~lagscope.inventory.instances.add_instance`). The new instance gets the source's
   encrypted password copied as it is, and the source's TLS setting (never weaker).

Everything a server says (hosts, names) is data: it is returned as text and never used to
connect anywhere but through an editor's explicit add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from lagscope.collectors.answer_limits import ODD_ANSWER, odd_answer
from lagscope.collectors.connection import ConnectionSpec
from lagscope.collectors.discovery import SourceView, read_source_view
from lagscope.collectors.executor import BatchFailed, PyMySQLExecutor
from lagscope.collectors.targets import AllowList
from lagscope.errors import Conflict, InvalidInput
from lagscope.inventory import instances as inventory
from lagscope.inventory.discovery_proposals import Known, Proposal, propose, same_host
from lagscope.models import Cluster, Instance
from lagscope.security.secret_box import SecretBox


@dataclass(frozen=True, slots=True)
class DiscoveryTarget:
    cluster_id: int
    source_id: int
    # Compared again before the source's login is copied: the source step 1 read.
    source_login: tuple[str, int, str, str, str, str | None]
    spec: ConnectionSpec
    known: tuple[Known, ...]


@dataclass(frozen=True, slots=True)
class Discovery:
    target: DiscoveryTarget
    view: SourceView
    proposals: tuple[Proposal, ...]


def _login_of(source: Instance) -> tuple[str, int, str, str, str, str | None]:
    return (
        source.host,
        source.port,
        source.user,
        source.password_enc,
        source.tls,
        source.tls_ca_path,
    )


def discovery_target(
    session: Session, box: SecretBox, cluster_id: int, allowed: AllowList | None = None
) -> DiscoveryTarget:
    """Step 1: the cluster's source and what the cluster already has."""
    cluster = inventory.get_cluster(session, cluster_id)
    source = next((i for i in cluster.instances if i.role == "source"), None)
    if source is None:
        raise InvalidInput(
            f"cluster {cluster.name!r} has no source instance: add its source first, then "
            "discover the replicas from it"
        )
    known = tuple(Known(i.name, i.host, i.port, i.server_id, i.role) for i in cluster.instances)
    # The source's own login, for the source only (its TLS, its pinned key, the allow-list).
    spec = inventory.connection_spec(box, source, 3.0, 5.0, allowed)
    return DiscoveryTarget(cluster.id, source.id, _login_of(source), spec, known)


def discover(target: DiscoveryTarget) -> Discovery:
    """Step 2: connect to the source once and decide the proposals. Whatever the source
    answers, the caller gets a collector error (the API's 502) or proposals: a refused
    statement is its error, an answer that cannot be used an ``UnexpectedAnswer``."""
    executor = PyMySQLExecutor(target.spec)
    try:
        view = read_source_view(executor)
    except BatchFailed as failed:
        raise failed.error from failed
    except ODD_ANSWER as exc:
        raise odd_answer(target.spec.server, exc, "discovery") from exc
    finally:
        executor.close()
    return Discovery(target, view, tuple(propose(view, target.known)))


def check_confirmed(
    host: str, port: int, confirmed: Sequence[tuple[str, int]], user: str | None = None
) -> None:
    """Refuse (422) unless the operator confirmed ``host:port`` itself as a place the source's
    login may go. The dialog lists every such place before anything is sent; a script has to
    name them too, so nothing reaches a server the person adding it has not looked at."""
    if any(same_host(h, host) and p == port for h, p in confirmed):
        return
    whose = f"the source's login (user {user!r})" if user else "the source's login"
    raise InvalidInput(
        f"{whose} goes only to a host:port you confirm, and {host}:{port} is not among those "
        "confirmed: check the address in the discovery dialog and confirm it (API: list it in "
        "`confirmed`), or add the replica with a login of its own"
    )


def add_with_source_login(
    session: Session,
    box: SecretBox,
    discovery: Discovery,
    name: str,
    host: str,
    port: int,
    confirmed: Sequence[tuple[str, int]],
    region: str = "",
    allowed: AllowList | None = None,
    ca_dir: str | None = None,
) -> Instance:
    """Step 3: add ``host:port`` as a replica logging in as the source does."""
    cluster: Cluster = inventory.get_cluster(session, discovery.target.cluster_id)
    source = next((i for i in cluster.instances if i.role == "source"), None)
    if source is None or source.id != discovery.target.source_id:
        raise Conflict("the cluster's source changed meanwhile: discover again")
    if _login_of(source) != discovery.target.source_login:
        raise Conflict("the source's address, login or TLS changed meanwhile: discover again")
    check_confirmed(host, port, confirmed, source.user)
    reported = [p for p in discovery.proposals if same_host(p.host, host)]
    match = next((p for p in reported if p.port == port), None)
    if match is None and any(p.port is None for p in reported):
        # The port would be the editor's choice, and with it the service that receives the
        # password: the source vouches for an address only as far as it reports one.
        raise InvalidInput(
            f"the source does not report the port of {host}, so its login is not sent there "
            "(a port is never guessed): add the replica with a login of its own and the port "
            "you know, or set report_port on the replica and discover again"
        )
    if match is None:
        raise InvalidInput(
            f"{host}:{port} is not a replica the source reports now: the source's login is "
            "only copied to a replica it reports (give a user and password to add any other)"
        )
    if match.monitored_as is not None:
        raise Conflict(f"{host}:{port} is already monitored as {match.monitored_as!r}")
    instance = inventory.add_instance(
        session,
        box,
        cluster,
        name,
        host,
        port,
        source.user,
        "",
        "replica",
        region,
        allowed=allowed,
        tls=source.tls,
        tls_ca_path=source.tls_ca_path,
        ca_dir=ca_dir,
    )
    # The encrypted value itself: the plain password is never handled here.
    instance.password_enc = source.password_enc
    session.flush()
    return instance
