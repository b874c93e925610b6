"""Which tables a statement reads: enough SQL reading to keep the collectors' statements from
joining ``information_schema`` tables in the server (MariaDB 10.11.19 crashed in the clean-up of
the temporary tables such joins fill; collectors/cause_readings/).

Not a SQL parser: it knows the shapes Lagscope writes (every table named after ``FROM`` or
``JOIN``, a comma list after ``FROM``, subqueries and derived tables in parentheses, string
literals with doubled quotes) and is tested on joins written each of those ways
(tests/unit/collectors/test_no_information_schema_joins.py).
"""

from __future__ import annotations

import re

_LITERAL = re.compile(r"'(?:[^']|'')*'")
_NAME = re.compile(r"`?[\w$]+`?(?:\.`?[\w$]+`?)?")
_FROM_OR_JOIN = re.compile(r"\b(FROM|JOIN)\s+", re.IGNORECASE)
# Where a FROM list ends: the next clause, a join, the end of a subquery.
_LIST_END = re.compile(
    r"\b(WHERE|GROUP|ORDER|LIMIT|HAVING|UNION|JOIN|LEFT|RIGHT|INNER|CROSS|STRAIGHT_JOIN|NATURAL"
    r"|ON|USING|FOR|LOCK|WINDOW|INTO)\b|\)|;",
    re.IGNORECASE,
)
_SCHEMAS = ("information_schema.", "performance_schema.")


def _table(item: str) -> str | None:
    match = _NAME.match(item.strip())
    return match.group(0).replace("`", "").lower() if match else None


def tables_read(sql: str) -> list[str]:
    """Every table ``sql`` names after FROM or JOIN (STRAIGHT_JOIN too), in order, lower case,
    as qualified as written. SHOW statements read none (``SHOW RELAYLOG … FROM <pos>`` is a
    position)."""
    text = _LITERAL.sub("''", sql)
    if text.lstrip().upper().startswith("SHOW"):
        return []
    found: list[str] = []
    for match in _FROM_OR_JOIN.finditer(text):
        rest = text[match.end() :]
        if rest.startswith("("):
            continue  # a derived table: its own FROM is met later
        if match.group(1).upper() == "JOIN":
            if (name := _table(rest)) is not None:
                found.append(name)
            continue
        end = _LIST_END.search(rest)
        items = rest[: end.start() if end else len(rest)].split(",")
        found.extend(name for item in items if (name := _table(item)) is not None)
    found.extend(
        name
        for match in re.finditer(r"\bSTRAIGHT_JOIN\s+", text, re.IGNORECASE)
        if (name := _table(text[match.end() :])) is not None
    )
    return found


def schema_tables(sql: str) -> list[str]:
    return [t for t in tables_read(sql) if t.startswith(_SCHEMAS)]


def joins_information_schema(sql: str) -> bool:
    """An ``information_schema`` table read together with any other table (itself again
    included), in a join, a comma list or a subquery."""
    tables = tables_read(sql)
    return len(tables) > 1 and any(t.startswith("information_schema.") for t in tables)
