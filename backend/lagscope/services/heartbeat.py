"""Run a heartbeat writer for every cluster whose heartbeat mode is ``lagscope``.

One thread per cluster source; the cluster list is re-read every ``refresh_s`` so clusters
added, removed or re-configured are picked up without a restart.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload, sessionmaker

from lagscope.collectors.executor import ConnectionSpec
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.heartbeat_writer import HeartbeatWriter
from lagscope.collectors.targets import AllowList
from lagscope.errors import CredentialsUnreadable
from lagscope.models import Cluster
from lagscope.services.inventory import tls_of
from lagscope.services.secrets import SecretBox

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WriterPlan:
    cluster_id: int
    spec: ConnectionSpec
    interval_s: float
    schema: str
    table: str


def writer_plans(
    session: Session, box: SecretBox, allowed: AllowList | None = None
) -> list[WriterPlan]:
    clusters = session.scalars(
        select(Cluster)
        .where(Cluster.enabled.is_(True), Cluster.heartbeat_mode == "lagscope")
        .options(selectinload(Cluster.instances))
    )
    plans = []
    for cluster in clusters:
        source = next((i for i in cluster.instances if i.role == "source"), None)
        if source is None or not cluster.heartbeat_user:
            continue
        if cluster.heartbeat_password_enc is None:
            # Cleared when the source moved: re-entering it is how the writer resumes, so the
            # old password never reaches the new address.
            continue
        try:
            password = box.decrypt(cluster.heartbeat_password_enc)
        except CredentialsUnreadable as exc:
            # This cluster's writer cannot start; the others must (the refresh loop runs on).
            log.error("heartbeat writer for cluster %s not started: %s", cluster.id, exc)
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
    ) -> None:
        self._sessions = sessions
        self._box = box
        self._allowed = allowed
        self._refresh_s = refresh_s
        self._running: dict[
            WriterPlan, tuple[threading.Thread, threading.Event, HeartbeatWriter]
        ] = {}

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            self.refresh()
            stop.wait(self._refresh_s)
        self.stop_all()

    def refresh(self) -> None:
        with self._sessions() as session:
            wanted = set(writer_plans(session, self._box, self._allowed))
        for plan in [p for p in self._running if p not in wanted]:
            self._stop(plan)
        for plan in wanted - set(self._running):
            self._start(plan)

    def stop_all(self) -> None:
        for plan in list(self._running):
            self._stop(plan)

    def _start(self, plan: WriterPlan) -> None:
        writer = HeartbeatWriter(plan.spec, HeartbeatTable("lagscope", plan.schema, plan.table))
        stop = threading.Event()
        thread = threading.Thread(
            target=writer.run,
            args=(plan.interval_s, stop),
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

    def _stop(self, plan: WriterPlan) -> None:
        thread, stop, writer = self._running.pop(plan)
        stop.set()
        thread.join(timeout=5)
        writer.close()
