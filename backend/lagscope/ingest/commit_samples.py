"""Every few minutes, a window of each source's binlog: MariaDB's group commits, MySQL's
commit parents.

Each run reads, per source, the window that starts where the previous run left its mark, then
marks the source's position for the next: a bounded read, by ``SHOW BINLOG EVENTS`` on MariaDB
(collectors/binlog_sample.py) and over the replication protocol on MySQL
(collectors/binlog_dump.py, which needs the optional REPLICATION SLAVE: without it the row
says so in ``problem`` and the source has no window; a window cut by its deadline or byte
caps, or not read because the dump's server id is taken, says why there too). Both paths have
the same bounds (LAGSCOPE_BINLOG_WINDOW_*): MariaDB's answer goes through the executor's
answer budget (collectors/answer_limits.py) with the window's deadline for the whole answer,
its byte budget per answer and its per-event cap per packet (one row, one event). The store keeps
the groups or parents (with transaction sizes), not the speed-ups: those are computed when asked
(history/parallelism.py), so a better simulation applies to the samples already stored.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.collectors.answer_limits import AnswerLimits
from lagscope.collectors.binlog_dump import (
    DEFAULT_BOUNDS,
    Bounds,
    installation_server_id,
    read_dump_window,
)
from lagscope.collectors.binlog_sample import (
    BinlogMark,
    CommitGroups,
    parse_mark,
    read_mark,
    read_window,
    run_one,
)
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.targets import AllowList
from lagscope.errors import (
    AccessDenied,
    CredentialsUnreadable,
    LagscopeError,
    UnexpectedAnswer,
)
from lagscope.inventory.instances import connection_spec
from lagscope.models import Cluster, CommitSample, Instance
from lagscope.security.secret_box import SecretBox, store_salt

log = logging.getLogger(__name__)

KEEP = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class SourceToSample:
    instance_id: int
    spec: ConnectionSpec
    mark: BinlogMark | None
    flavor: str = "mariadb"
    # The server ids Lagscope has read from this cluster's servers: none is the dump's to use.
    known_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class DumpOptions:
    """Who the dump says it is, and how long and how much it may read."""

    server_id: int
    bounds: Bounds = DEFAULT_BOUNDS


@dataclass(frozen=True, slots=True)
class Window:
    """What one run read of one source: MariaDB's groups or MySQL's parents, or why nothing."""

    groups: CommitGroups | None = None
    parents: list[tuple[int, int, int]] | None = None
    problem: str | None = None

    @property
    def transactions(self) -> int:
        if self.parents is not None:
            return len(self.parents)
        return self.groups.transactions if self.groups else 0


# MySQL 8.2+ renamed it; 8.4 removed the old name.
MYSQL_MARK_STATEMENTS = ("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS")


def sources(
    session: Session, box: SecretBox, allowed: AllowList | None, timeout_s: float
) -> list[SourceToSample]:
    """The enabled MariaDB and MySQL sources of enabled clusters, each with its newest mark."""
    found: list[SourceToSample] = []
    rows = session.scalars(
        select(Instance)
        .join(Cluster)
        .where(
            Cluster.enabled.is_(True),
            Instance.enabled.is_(True),
            Instance.role == "source",
            Instance.flavor.in_(("mariadb", "mysql")),
        )
        .order_by(Instance.id)
    )
    for instance in rows:
        newest = session.scalars(
            select(CommitSample)
            .where(CommitSample.instance_id == instance.id)
            .order_by(CommitSample.taken_at.desc())
            .limit(1)
        ).first()
        mark = None
        if newest is not None and newest.next_file and newest.next_pos is not None:
            mark = BinlogMark(newest.next_file, newest.next_pos)
        try:
            spec = connection_spec(box, instance, timeout_s, timeout_s * 2, allowed)
        except CredentialsUnreadable:
            continue
        known = session.scalars(
            select(Instance.server_id).where(
                Instance.cluster_id == instance.cluster_id, Instance.server_id.is_not(None)
            )
        )
        found.append(
            SourceToSample(
                instance.id,
                spec,
                mark,
                instance.flavor or "mariadb",
                tuple(int(i) for i in known if i is not None),
            )
        )
    return found


def window_executor(spec: ConnectionSpec, bounds: Bounds = DEFAULT_BOUNDS) -> PyMySQLExecutor:
    """An executor whose answers have the window's bounds: the budget lowers each ``recv``'s
    timeout to what is left of the deadline, so a source that trickles its rows (each inside
    the read timeout) is still cut off when the window's time is up."""
    limits = AnswerLimits(packet_bytes=bounds.max_event_bytes, answer_bytes=bounds.max_bytes)
    return PyMySQLExecutor(replace(spec, read_timeout_s=bounds.deadline_s), limits)


def cut_problem(exc: UnexpectedAnswer) -> str:
    """The row's ``problem`` for a MariaDB window the executor refused: the answer is read
    whole or not at all, so nothing of it is kept."""
    return (
        f"not read: {exc.what} (the window's bounds: LAGSCOPE_BINLOG_WINDOW_DEADLINE_S, "
        "LAGSCOPE_BINLOG_WINDOW_MAX_BYTES, LAGSCOPE_BINLOG_WINDOW_MAX_EVENT_BYTES)"
    )


def read(
    source: SourceToSample, dump: DumpOptions | None = None, bounds: Bounds = DEFAULT_BOUNDS
) -> tuple[Window, BinlogMark | None]:
    """The window after the mark (empty on the first run or when the mark's file is gone),
    then the new mark."""
    if source.flavor == "mysql":
        executor = PyMySQLExecutor(source.spec)  # the mark only: the dump has its own reader
    else:
        executor = window_executor(source.spec, bounds)
    try:
        window = Window()
        if source.mark is not None:
            try:
                window = _window(source, executor, source.mark, dump)
            except AccessDenied as exc:  # MySQL without REPLICATION SLAVE: say so, keep marking
                window = Window(problem=exc.detail)
            except UnexpectedAnswer as exc:  # over a bound; the executor closed the connection
                window = Window(problem=cut_problem(exc))
            except LagscopeError as exc:  # purged or rotated away: start again from a new mark
                log.info("binlog window of instance %s not read: %s", source.instance_id, exc)
        try:
            mark = _mysql_mark(executor) if source.flavor == "mysql" else read_mark(executor)
        except LagscopeError:
            if window.problem is None:
                raise
            # The row still says why the window was cut; the next run only marks.
            return window, None
        return window, mark
    finally:
        executor.close()


def _window(
    source: SourceToSample, executor: PyMySQLExecutor, mark: BinlogMark, dump: DumpOptions | None
) -> Window:
    if source.flavor == "mysql":
        if dump is None:
            raise ValueError("a MySQL source's window needs the dump's options")
        dumped = read_dump_window(
            source.spec,
            mark,
            mariadb=False,
            server_id=dump.server_id,
            known_ids=source.known_ids,
            bounds=dump.bounds,
        )
        return Window(parents=dumped.parents, problem=dumped.problem)
    return Window(groups=read_window(executor, mark))


def _mysql_mark(executor: PyMySQLExecutor) -> BinlogMark | None:
    for statement in MYSQL_MARK_STATEMENTS:
        try:
            result = run_one(executor, statement)
        except AccessDenied:
            raise
        except LagscopeError:
            continue  # the other name on this version
        return parse_mark(result)
    return None


def sample_all(
    sessions: sessionmaker[Session],
    box: SecretBox,
    allowed: AllowList | None,
    now_s: float,
    timeout_s: float = 3.0,
    dump_server_id: int | None = None,
    bounds: Bounds = DEFAULT_BOUNDS,
    until: float | None = None,
) -> int:
    """One run over every source; returns the windows stored. One unreachable source costs the
    others nothing but its timeout; a slow one, its window's deadline. ``dump_server_id``:
    LAGSCOPE_BINLOG_DUMP_SERVER_ID, else the installation's own. ``until`` (``time.monotonic``):
    no source is begun after it (the job's soft time limit; a limit that strikes inside a read
    is that source's problem, not the run's end, so the run ends here)."""
    with sessions() as session:
        todo = sources(session, box, allowed, timeout_s)
    stored = 0
    now = datetime.fromtimestamp(now_s, UTC)
    dump: DumpOptions | None = None
    if any(s.flavor == "mysql" for s in todo):
        server_id = dump_server_id or installation_server_id(store_salt(sessions)()[1])
        dump = DumpOptions(server_id, bounds)
    for done, source in enumerate(todo):
        if until is not None and time.monotonic() >= until:
            log.warning(
                "binlog sampling out of time: %s source(s) wait for the next run", len(todo) - done
            )
            break
        try:
            window, mark = read(source, dump, bounds)
        except LagscopeError as exc:
            log.info("binlog sample of instance %s skipped: %s", source.instance_id, exc)
            continue
        with sessions() as session, session.begin():
            session.add(
                CommitSample(
                    instance_id=source.instance_id,
                    taken_at=now,
                    transactions=window.transactions,
                    groups=[list(g) for g in window.groups.groups] if window.groups else [],
                    parents=[list(p) for p in window.parents] if window.parents else None,
                    problem=window.problem,
                    next_file=mark.file if mark else None,
                    next_pos=mark.pos if mark else None,
                )
            )
            session.execute(delete(CommitSample).where(CommitSample.taken_at < now - KEEP))
        stored += bool(window.transactions)
    return stored
