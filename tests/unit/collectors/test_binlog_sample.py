"""The binlog window's commit groups, from rows as MariaDB 10.11 answered SHOW BINLOG EVENTS
on the lab under its write load (payloads shortened)."""

from __future__ import annotations

import pytest

from lagscope.collectors.binlog_sample import (
    BinlogMark,
    events_statement,
    parse_events,
    parse_mark,
)
from lagscope.collectors.executor import ResultSet

COLUMNS = ("Log_name", "Pos", "Event_type", "Server_id", "End_log_pos", "Info")
F = "mariadb-bin.000001"


def trx(pos: int, gtid: str, cid: int | None = None) -> list[tuple[object, ...]]:
    """One row-based INSERT as the lab's load writes it: 521 bytes from GTID to Xid."""
    info = f"BEGIN GTID {gtid}" + (f" cid={cid}" if cid else "")
    head = 44 if cid else 42
    return [
        (F, pos, "Gtid", 1, pos + head, info),
        (F, pos + head, "Annotate_rows", 1, pos + head + 208, "INSERT INTO lagscope_load.events …"),
        (
            F,
            pos + head + 208,
            "Table_map",
            1,
            pos + head + 272,
            "table_id: 22 (lagscope_load.events)",
        ),
        (
            F,
            pos + head + 272,
            "Write_rows_v1",
            1,
            pos + head + 448,
            "table_id: 22 flags: STMT_END_F",
        ),
        (F, pos + head + 448, "Xid", 1, pos + head + 479, "COMMIT /* xid=181383 */"),
    ]


def window(*trxs: list[tuple[object, ...]]) -> ResultSet:
    return ResultSet(COLUMNS, tuple(row for t in trxs for row in t))


def test_group_commits_by_cid_and_singles_alone():
    got = parse_events(
        window(
            trx(93694269, "0-1-180014"),
            trx(93694790, "0-1-180015"),
            trx(93695311, "0-1-180016", 181385),
            trx(93695834, "0-1-180017", 181385),
            trx(93696357, "0-1-180018", 181385),
            trx(93696880, "0-1-180019"),
        )
    )
    assert [len(g) for g in got.groups] == [1, 1, 3, 1]
    assert got.groups[0] == (521,) and got.groups[2] == (523, 523, 523)
    assert got.transactions == 6 and got.events == 30


def test_a_transaction_cut_by_the_window_is_dropped_and_so_is_an_open_group():
    cut = trx(93697401, "0-1-180020")[:3]  # no Xid read
    assert [len(g) for g in parse_events(window(trx(1000, "0-1-1"), cut)).groups] == [1]
    open_group = window(trx(1000, "0-1-1"), trx(1600, "0-1-2", 9), trx(2200, "0-1-3", 9))
    assert [len(g) for g in parse_events(open_group).groups] == [1]


def test_a_ddl_is_its_own_transaction_and_its_text_is_not_kept():
    ddl = [
        (F, 1013, "Gtid", 1, 1055, "GTID 0-1-5"),
        (F, 1055, "Query", 1, 1150, "CREATE USER 'x'@'%' IDENTIFIED BY 'secret'"),
    ]
    got = parse_events(window(ddl, trx(1150, "0-1-6")))
    assert got.groups == ((137,), (521,))
    assert "secret" not in repr(got)


def test_the_mark_and_the_window_statement():
    status = ResultSet(
        ("File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"), ((F, 93694269, "", ""),)
    )
    mark = parse_mark(status)
    assert mark == BinlogMark(F, 93694269)
    assert events_statement(mark, 100) == f"SHOW BINLOG EVENTS IN '{F}' FROM 93694269 LIMIT 100"
    assert parse_mark(ResultSet(status.columns, ())) is None  # binary log off
    assert parse_mark(ResultSet(status.columns, (("x'; DROP", 4, "", ""),))) is None
    with pytest.raises(ValueError):
        events_statement(BinlogMark("a' OR '1", 4))
