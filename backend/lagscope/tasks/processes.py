"""The worker's and beat's self-watch threads (health/self_watch.py), started by Celery's
signals in the process they watch: the worker's pool parent, and beat."""

from __future__ import annotations

import atexit
import time
from typing import Any

from celery.signals import after_task_publish, beat_init, worker_ready, worker_shutdown

from lagscope.config import get_settings
from lagscope.health.self_watch import SelfWatch

DISPATCH_TASK = "lagscope.dispatch_polls"

_watch: SelfWatch | None = None
_dispatched_at: float | None = None
# False in the slow jobs' worker that ``lagscope worker`` starts beside its polls' worker: the
# parent's row stands for both, so readiness counts one worker per ``lagscope worker``.
_reports = True


def report_as_worker(reports: bool) -> None:
    global _reports
    _reports = reports


@worker_ready.connect
def start_worker_watch(**_: Any) -> None:
    global _watch
    if not _reports:
        return
    _watch = SelfWatch("worker", get_settings())
    _watch.start()


@worker_shutdown.connect
def stop_worker_watch(**_: Any) -> None:
    if _watch is not None:
        _watch.stop()


@beat_init.connect
def start_beat_watch(**_: Any) -> None:
    global _watch
    # Only in beat: the dispatcher is published here, and a publish that returned reached the
    # broker. A worker's or the API's publishes are not beat's.
    after_task_publish.connect(note_dispatch, weak=False)
    _watch = SelfWatch("beat", get_settings(), last_dispatch=lambda: _dispatched_at)
    _watch.start()
    atexit.register(_watch.stop)  # beat has no shutdown signal; SIGTERM exits through atexit


def note_dispatch(sender: Any = None, **_: Any) -> None:
    global _dispatched_at
    if sender == DISPATCH_TASK:
        _dispatched_at = time.time()
