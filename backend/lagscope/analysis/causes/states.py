"""What the rules ask of a thread's state: its row in the table (:mod:`.state_table`), its
family, whether it is one of the rules' subsets (idle, committing, a row lookup…), and the
receiver's states and a DDL statement, which the table does not hold.

Matching is on lower-cased text, by prefix ("find_row()" with arguments, "… for more updates").
The table's names are importable from here too.
"""

from __future__ import annotations

import re

from lagscope.analysis.causes.state_table import ANY_APPLIER as ANY_APPLIER
from lagscope.analysis.causes.state_table import APPLIER_STATES as APPLIER_STATES
from lagscope.analysis.causes.state_table import BOTH as BOTH
from lagscope.analysis.causes.state_table import COORDINATOR as COORDINATOR
from lagscope.analysis.causes.state_table import MARIADB as MARIADB
from lagscope.analysis.causes.state_table import MYSQL as MYSQL
from lagscope.analysis.causes.state_table import SQL as SQL
from lagscope.analysis.causes.state_table import SQL_OR_COORDINATOR as SQL_OR_COORDINATOR
from lagscope.analysis.causes.state_table import WORKER as WORKER
from lagscope.analysis.causes.state_table import WORKERS_AND_SERIAL as WORKERS_AND_SERIAL
from lagscope.analysis.causes.state_table import Family as Family
from lagscope.analysis.causes.state_table import State as State


def _texts(tag: str) -> tuple[str, ...]:
    return tuple(s.text for s in APPLIER_STATES if s.tag == tag)


# Receiver (IO) thread, copying an event it has read into the relay log. MariaDB and MySQL
# before 8.0.26: "Queueing master event to the relay log"; MySQL 8.0.26+: "Queueing source event
# to the relay log".
IO_QUEUEING = ("queueing master event to the relay log", "queueing source event to the relay log")
# Receiver connected and waiting for the source to send: "Waiting for master to send event"
# (MariaDB, MySQL < 8.0.26) / "Waiting for source to send event" (MySQL 8.0.26+).
IO_WAITING = ("waiting for master to send event", "waiting for source to send event")

# The rules' subsets of the table.
SQL_IDLE = _texts("sql_idle")
SQL_COMMIT = _texts("commit")
ROW_LOOKUP = _texts("row_lookup")
METADATA_LOCK_WAIT = _texts("mdl_table")[0]
DDL_STATES = _texts("ddl")
WORKER_WAITING_FOR_PRIOR = _texts("worker_prior")
WORKER_IDLE = _texts("worker_idle")
DELAY_WAIT = _texts("delay")

# Longest first, so that a prefix of another string ("commit", "end") never wins over it.
_BY_LENGTH = tuple(sorted(APPLIER_STATES, key=lambda s: -len(s.text)))
# States a statement step shows briefly, matched only whole: "end" must not take "ending…".
_WHOLE_ONLY = frozenset(
    s.text for s in APPLIER_STATES if s.family is Family.OTHER or s.tag == "commit"
) | {"executing", "updating", "query end", "system lock", "sending data"}


def lookup(state: str | None) -> State | None:
    """The table's row for an applier thread's state; None for a state it does not know (and
    for no state at all)."""
    text = (state or "").strip().lower()
    if not text:
        return None
    for row in _BY_LENGTH:
        if text == row.text or (row.text not in _WHOLE_ONLY and text.startswith(row.text)):
            return row
    return None


def family(state: str | None) -> Family | None:
    row = lookup(state)
    return row.family if row is not None else None


def matches(state: str | None, patterns: tuple[str, ...]) -> bool:
    """``state`` starts with one of ``patterns`` (lower-cased), e.g. "find_row()" with arguments."""
    text = (state or "").strip().lower()
    return bool(text) and text.startswith(patterns)


def is_commit(state: str | None) -> bool:
    # Exactly "Commit" / "waiting for handler commit": "Waiting for prior transaction to commit"
    # is a parallel worker waiting its turn, not a commit.
    return (state or "").strip().lower() in SQL_COMMIT


# A statement that changes the schema (the applier's INFO): what "DDL" means to an operator.
DDL_STATEMENT = re.compile(
    r"^\s*(ALTER\s+(ONLINE\s+)?(IGNORE\s+)?TABLE|CREATE\s+(UNIQUE\s+|FULLTEXT\s+|SPATIAL\s+)?"
    r"INDEX|DROP\s+INDEX|OPTIMIZE\s+TABLE|TRUNCATE\s+(TABLE\s+)?|RENAME\s+TABLE|"
    r"(CREATE|DROP)\s+TABLE)",
    re.IGNORECASE,
)


def is_ddl_statement(statement: str | None) -> bool:
    return bool(statement) and DDL_STATEMENT.match(statement or "") is not None
