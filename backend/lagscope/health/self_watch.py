"""A thread in every long-running Lagscope process: report itself, and watch the others.

Every ``report_every_s`` it sets the process's row (health/processes.py). Where
``alert_watchdog_every_s`` > 0 it also runs the ``polling_stopped`` watchdog
(alerts/watchdog.py): judged in *every* kind of process (API, workers, beat, heartbeat
writer), so the alert fires and is sent whichever of them is down: the API dead, the workers
dead, beat dead, or the broker gone (the watchdog needs only the store and the webhook's
receiver). It does not fire twice when all are up: the alert states are compare-and-set rows
(one process wins each change) and a delivery is claimed by one sender.

The thread owns its engine, with no pool: in a Celery worker it runs in the pool's parent, and a
child forked later must not inherit an open store connection.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from lagscope.alerts.watchdog import Watchdog
from lagscope.config import Settings
from lagscope.db import make_engine, make_session_factory
from lagscope.health import processes
from lagscope.security.secret_box import SecretBox, store_box

log = logging.getLogger(__name__)


class SelfWatch:
    def __init__(
        self,
        kind: str,
        settings: Settings,
        sessions: sessionmaker[Session] | None = None,
        box: SecretBox | None = None,
        last_dispatch: Callable[[], float | None] | None = None,
    ) -> None:
        assert kind in processes.KINDS, kind
        self.kind, self.settings = kind, settings
        self.name = processes.this_process()
        self.started_s = time.time()
        self._sessions = sessions
        self._box = box
        self._last_dispatch = last_dispatch
        self._watchdog: Watchdog | None = None
        self._last_judged = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"lagscope-{kind}-watch", daemon=True
        )

    def start(self) -> None:
        """``report_every_s`` <= 0 (some tests): no thread, no row, no watchdog here."""
        if self.settings.report_every_s > 0:
            self._thread.start()

    def stop(self) -> None:
        """Stop the thread and delete this process's row (a clean stop is not an outage)."""
        self._stop.set()
        if not self._thread.is_alive():
            return
        self._thread.join(timeout=30)
        try:
            with self.sessions() as session, session.begin():
                processes.forget(session, self.kind, self.name)
        except Exception:  # the store may be what is down; the row then goes stale
            log.warning("could not remove this process's row from the store", exc_info=True)

    @property
    def sessions(self) -> sessionmaker[Session]:
        if self._sessions is None:
            engine = make_engine(self.settings.database_url, poolclass=NullPool)
            self._sessions = make_session_factory(engine)
        return self._sessions

    def _run(self) -> None:
        self.round(time.time())
        while not self._stop.wait(self.settings.report_every_s):
            self.round(time.time())

    def round(self, now_s: float) -> None:
        """Report, then judge ``polling_stopped`` when it is due. Never raises: the thread must
        outlive the store's outages (and report again once the store is back)."""
        try:
            with self.sessions() as session, session.begin():
                dispatched = self._last_dispatch() if self._last_dispatch else None
                processes.report(session, self.kind, self.name, now_s, self.started_s, dispatched)
        except Exception:
            log.warning("%s: could not report to the store", self.kind, exc_info=True)
        every = self.settings.alert_watchdog_every_s
        if every <= 0 or now_s - self._last_judged < every:
            return
        self._last_judged = now_s
        try:
            self.watchdog.round(now_s)
        except Exception:
            log.exception("alert watchdog round failed")

    @property
    def watchdog(self) -> Watchdog:
        if self._watchdog is None:
            if self._box is None:
                self._box = store_box(
                    self.sessions, self.settings.secret_key, self.settings.old_keys()
                )
            self._watchdog = Watchdog(self.sessions, self._box, self.settings)
        return self._watchdog
