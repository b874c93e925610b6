"""Lagscope's processes report themselves in the store: who runs, and since when.

Each long-running process (API, worker, beat, heartbeat writer) has one row, keyed by its kind
and ``host:pid``, refreshed by its self-watch thread; a clean stop deletes it. The rows are
what ``/readyz`` counts, so a worker on another host is seen without asking the broker (which
may be the part that is down).
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from lagscope.analysis.readiness import PROCESS_KINDS
from lagscope.models import LagscopeProcess

KINDS = PROCESS_KINDS
# Rows of processes silent this long are deleted (a killed process never deletes its own).
FORGET_AFTER = timedelta(days=1)


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def report(
    session: Session,
    kind: str,
    name: str,
    now_s: float,
    started_s: float,
    last_dispatch_s: float | None = None,
) -> None:
    """Set this process's row (insert it the first time), and forget long-silent ones."""
    now = datetime.fromtimestamp(now_s, UTC)
    values: dict[str, object] = {"seen_at": now}
    if last_dispatch_s is not None:
        values["last_dispatch_at"] = datetime.fromtimestamp(last_dispatch_s, UTC)
    result = session.execute(
        update(LagscopeProcess)
        .where(LagscopeProcess.kind == kind, LagscopeProcess.name == name)
        .values(**values)
    )
    if not getattr(result, "rowcount", 0):
        try:
            with session.begin_nested():
                session.add(
                    LagscopeProcess(
                        kind=kind,
                        name=name,
                        started_at=datetime.fromtimestamp(started_s, UTC),
                        **values,
                    )
                )
        except IntegrityError:  # inserted by a concurrent report of the same name: it is there
            pass
    session.execute(delete(LagscopeProcess).where(LagscopeProcess.seen_at < now - FORGET_AFTER))


def forget(session: Session, kind: str, name: str) -> None:
    """A clean stop: the process is gone on purpose, not missing."""
    session.execute(
        delete(LagscopeProcess).where(LagscopeProcess.kind == kind, LagscopeProcess.name == name)
    )


def running(session: Session) -> list[LagscopeProcess]:
    return list(session.scalars(select(LagscopeProcess).order_by(LagscopeProcess.kind)))
