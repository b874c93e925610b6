"""A recorded-answers Executor: the mysqld_exporter sqlmock habit.

Each test says which statements the server answers and how; the fake records every batch it
was sent, so tests assert both the normalized values and the statements that ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lagscope.collectors import cause_readings, file_io
from lagscope.collectors.dialect import MARIADB, MYSQL_57, MYSQL_84
from lagscope.collectors.executor import EMPTY, BatchFailed, ResultSet
from lagscope.errors import CollectorError, ServerUnreachable


def rs(columns: Sequence[str], *rows: Sequence[Any]) -> ResultSet:
    return ResultSet(tuple(columns), tuple(tuple(r) for r in rows))


class FakeExecutor:
    def __init__(
        self,
        answers: Mapping[str, ResultSet | CollectorError],
        server: str = "db:3306",
        fallback: Callable[[str], ResultSet | None] | None = None,
    ):
        self.server = server
        self.answers = dict(answers)
        # Answers statements a test does not care about (None: unexpected after all).
        self.fallback = fallback
        self.batches: list[list[str]] = []
        self.closed = 0
        self.down = False

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.batches.append(list(statements))
        if self.down:
            raise ServerUnreachable(self.server, "Connection refused", 2003)
        results: list[ResultSet] = []
        for index, sql in enumerate(statements):
            answer = self.answers.get(sql)
            if answer is None and self.fallback is not None:
                answer = self.fallback(sql)
            if answer is None:
                raise AssertionError(f"unexpected statement: {sql}")
            if isinstance(answer, CollectorError):
                raise BatchFailed(index, answer, results)
            results.append(answer)
        return results

    def close(self) -> None:
        self.closed += 1

    @property
    def statements(self) -> list[str]:
        return [s for batch in self.batches for s in batch]


def _cause_statements() -> frozenset[str]:
    memory = [cause_readings.CauseMemory(mdl_plugin=p) for p in (None, False, True)]
    found: set[str | None] = set()
    for d in (MARIADB, MYSQL_57, MYSQL_84):
        found |= {
            cause_readings.sessions_statement(d),
            *cause_readings.transactions_statements(d),
            *cause_readings.row_blockers_statements(d),
            cause_readings.receive_statement(d),
            *cause_readings.lock_sessions_statements(d),
        }
        for m in memory:
            found |= {
                cause_readings.mdl_probe_statement(d, m),
                *cause_readings.mdl_blockers_statements(d, m),
                *cause_readings.backup_holders_statements(d, m),
            }
    # Sent only while behind, like the cause readings (collectors/file_io.py).
    found.add(file_io.statement())
    return frozenset(s for s in found if s)


CAUSE_STATEMENTS = _cause_statements()


def no_cause_evidence(sql: str) -> ResultSet | None:
    """A fallback for tests about something else whose replica is behind: every cause reading
    answers with nothing found."""
    if sql in CAUSE_STATEMENTS or sql.startswith("SHOW RELAYLOG"):
        return EMPTY
    return None
