"""Per worker process: the engine, the session factory, the cluster reader, the secret box.

Created lazily in the process that uses them (after Celery's fork), never shared across one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from lagscope.config import Settings, get_settings
from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.reader import ClusterReader
from lagscope.security.secret_box import SecretBox, store_box


@dataclass(slots=True)
class WorkerContext:
    pid: int
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    reader: ClusterReader
    box: SecretBox

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """The task owns the transaction: commit on success, roll back on error."""
        with self.sessions() as session, session.begin():
            yield session


_context: WorkerContext | None = None


def context() -> WorkerContext:
    global _context
    if _context is None or _context.pid != os.getpid():
        settings = get_settings()
        engine = make_engine(settings.database_url)
        sessions = make_session_factory(engine)
        _context = WorkerContext(
            pid=os.getpid(),
            settings=settings,
            engine=engine,
            sessions=sessions,
            reader=ClusterReader(max_threads=settings.poll_batch_instances + 24),
            box=store_box(sessions, settings.secret_key, settings.old_keys()),
        )
    return _context
