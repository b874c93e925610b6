"""A recorded-answers Executor: the mysqld_exporter sqlmock habit.

Each test says which statements the server answers and how; the fake records every batch it
was sent, so tests assert both the normalized values and the statements that ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lagscope.collectors.executor import BatchFailed, ResultSet
from lagscope.errors import CollectorError, ServerUnreachable


def rs(columns: Sequence[str], *rows: Sequence[Any]) -> ResultSet:
    return ResultSet(tuple(columns), tuple(tuple(r) for r in rows))


class FakeExecutor:
    def __init__(self, answers: Mapping[str, ResultSet | CollectorError], server: str = "db:3306"):
        self.server = server
        self.answers = dict(answers)
        self.batches: list[list[str]] = []
        self.closed = 0
        self.down = False

    def run(self, statements: Sequence[str]) -> list[ResultSet]:
        self.batches.append(list(statements))
        if self.down:
            raise ServerUnreachable(self.server, "Connection refused", 2003)
        results: list[ResultSet] = []
        for index, sql in enumerate(statements):
            if sql not in self.answers:
                raise AssertionError(f"unexpected statement: {sql}")
            answer = self.answers[sql]
            if isinstance(answer, CollectorError):
                raise BatchFailed(index, answer, results)
            results.append(answer)
        return results

    def close(self) -> None:
        self.closed += 1

    @property
    def statements(self) -> list[str]:
        return [s for batch in self.batches for s in batch]
