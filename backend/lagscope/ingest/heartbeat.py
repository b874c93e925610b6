"""Run a heartbeat writer for every cluster whose heartbeat mode is ``lagscope``.

One thread per cluster source; the cluster list is re-read every ``refresh_s`` so clusters
added, removed or re-configured are picked up without a restart.

A cluster is skipped, and the reason logged once (and shown as ``heartbeat.problem`` in the
cluster API), when inventory/heartbeat_login.py refuses it: no password, a password entered
for another source or address, or a login the source refused and that is backing off (the
back-off lives on the cluster row: a writer that is refused records it and ends; the refresh
starts a new one when the row says it is time).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.heartbeat_writer import HeartbeatWriter, Refusal
from lagscope.collectors.targets import AllowList
from lagscope.errors import CredentialsUnreadable
from lagscope.inventory import heartbeat_login
from lagscope.inventory import server_logins as logins
from lagscope.inventory.instances import tls_of
from lagscope.models import Cluster
from lagscope.security.secret_box import SecretBox

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WriterPlan:
    cluster_id: int
    spec: ConnectionSpec
    interval_s: float
    schema: str
    table: str
    # The stored ciphertext the spec's password came from: a refusal is only counted while
    # it is still the stored one (not if the password was re-entered meanwhile).
    token: str = field(default="", repr=False)


def writer_plans(
    session: Session,
    box: SecretBox,
    allowed: AllowList | None = None,
    skipped: dict[int, str] | None = None,
    now: datetime | None = None,
) -> list[WriterPlan]:
    """The writers to run now; ``skipped`` receives, per cluster meant to have one and not
    getting it, the reason."""
    now = now or datetime.now(UTC)
    skipped = {} if skipped is None else skipped
    clusters = session.scalars(
        select(Cluster)
        .where(Cluster.enabled.is_(True), Cluster.heartbeat_mode == "lagscope")
        .options(selectinload(Cluster.instances))
    )
    plans = []
    for cluster in clusters:
        if why := heartbeat_login.refusal(cluster, now):
            skipped[cluster.id] = why
            continue
        source = heartbeat_login.source_of(cluster)
        # refusal() says None only with a user, a password and its source.
        assert source is not None and cluster.heartbeat_user
        assert cluster.heartbeat_password_enc is not None
        try:
            password = box.decrypt(cluster.heartbeat_password_enc)
        except CredentialsUnreadable as exc:
            # This cluster's writer cannot start; the others must (the refresh loop runs on).
            skipped[cluster.id] = f"credentials_unreadable: {exc}"
            continue
        spec = ConnectionSpec(
            host=source.host,
            port=source.port,
            user=cluster.heartbeat_user,
            password=password,
            allowed=allowed,  # the writer logs in to the source: the same list applies
            # The writer's login goes to the source: protected as the source's polls are.
            **tls_of(source),
        )
        plans.append(
            WriterPlan(
                cluster.id,
                spec,
                cluster.heartbeat_interval_s,
                cluster.heartbeat_schema,
                cluster.heartbeat_table,
                cluster.heartbeat_password_enc,
            )
        )
    return plans


class HeartbeatService:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        box: SecretBox,
        refresh_s: float = 10.0,
        allowed: AllowList | None = None,
        backoff: logins.Backoff = logins.DEFAULT_BACKOFF,
        executor_factory: Callable[[ConnectionSpec], PyMySQLExecutor] = PyMySQLExecutor,
    ) -> None:
        self._sessions = sessions
        self._box = box
        self._allowed = allowed
        self._refresh_s = refresh_s
        self._backoff = backoff
        self._executor_factory = executor_factory
        self._running: dict[
            WriterPlan, tuple[threading.Thread, threading.Event, HeartbeatWriter]
        ] = {}
        self._said: dict[int, str] = {}  # the skip reason last logged, per cluster

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.refresh()
            stop.wait(self._refresh_s)
        self.stop_all()

    def refresh(self) -> None:
        # A writer whose login was refused has ended after recording it on the cluster row:
        # taken before the row is read, so that read sees the back-off. Started again below if
        # it allows a try now, else at a later refresh. (Had the record failed, the writer is
        # tried again at once: one refresh apart, not every beat.)
        ended = {p for p, (thread, _, _) in self._running.items() if not thread.is_alive()}
        skipped: dict[int, str] = {}
        with self._sessions() as session:
            wanted = set(writer_plans(session, self._box, self._allowed, skipped))
        for cluster_id, why in skipped.items():
            if self._said.get(cluster_id) != why:
                log.warning("heartbeat writer for cluster %s not started: %s", cluster_id, why)
        self._said = skipped
        for plan in [p for p in self._running if p not in wanted or p in ended]:
            self._stop(plan)
        for plan in wanted - set(self._running):
            self._start(plan)

    def stop_all(self) -> None:
        for plan in list(self._running):
            self._stop(plan)

    def _start(self, plan: WriterPlan) -> None:
        writer = HeartbeatWriter(
            plan.spec,
            HeartbeatTable("lagscope", plan.schema, plan.table),
            self._executor_factory,
        )
        stop = threading.Event()
        thread = threading.Thread(
            target=writer.run,
            args=(plan.interval_s, stop),
            kwargs={
                "on_refused": lambda exc: self._note(plan, exc),
                "on_first_ok": lambda: self._note(plan, None),
            },
            name=f"heartbeat-{plan.cluster_id}",
            daemon=True,
        )
        thread.start()
        self._running[plan] = (thread, stop, writer)
        log.info(
            "heartbeat writer for cluster %s on %s every %.2f s",
            plan.cluster_id,
            writer.server,
            plan.interval_s,
        )

    def _note(self, plan: WriterPlan, refused: Refusal | None) -> None:
        """Record this writer's login on the cluster row (its back-off), if the password it
        used is still the stored one. Runs on the writer's thread: a store that cannot take
        the write now (locked, restarting) is logged, never allowed to stop the heartbeat."""
        try:
            self._record(plan, refused)
        except SQLAlchemyError as exc:
            log.warning(
                "heartbeat writer for cluster %s: login state not stored: %s", plan.cluster_id, exc
            )

    def _record(self, plan: WriterPlan, refused: Refusal | None) -> None:
        with self._sessions() as session, session.begin():
            cluster = session.get(Cluster, plan.cluster_id)
            if cluster is None or cluster.heartbeat_password_enc != plan.token:
                return
            if refused is None:
                if cluster.heartbeat_login_state != logins.OK:
                    heartbeat_login.note_ok(cluster)
                return
            heartbeat_login.note_refused(cluster, datetime.now(UTC), self._backoff)
            log.warning(
                "heartbeat writer for cluster %s: login refused (%s); %s",
                plan.cluster_id,
                refused,
                heartbeat_login.refusal(cluster, datetime.now(UTC)) or "retrying",
            )

    def _stop(self, plan: WriterPlan) -> None:
        thread, stop, writer = self._running.pop(plan)
        stop.set()
        thread.join(timeout=5)
        writer.close()
