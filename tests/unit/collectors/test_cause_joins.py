"""The joins the server is no longer asked to make (collectors/cause_readings/): each
information_schema table arrives alone, and these functions join the rows as the old SQL did
(its ``JOIN`` / ``LEFT JOIN`` / ``DISTINCT`` / ``ORDER BY``), from hand-made rows in the aliases
each statement sends.
"""

from __future__ import annotations

from typing import Any

import pytest

from lagscope.collectors import cause_readings as cr
from lagscope.collectors.cause_readings import Sessions
from lagscope.collectors.dialect import MARIADB, MYSQL_57
from tests.unit.fakes.executor import rs

MDL_WAIT = "Waiting for table metadata lock"
IDLE = "Slave has read all relay log; waiting for more updates"


def session(
    id: int,
    user: str = "app",
    command: str = "Sleep",
    time: int | None = 10,
    state: str | None = "",
    statement: str | None = None,
    own_user: int = 0,
    host: str = "10.0.0.9:5000",
) -> dict[str, Any]:
    return {
        "id": id,
        "user": user,
        "host": host,
        "command": command,
        "time": time,
        "time_s": None if time is None else time + 0.25,
        "state": state,
        "statement": statement,
        "own_user": own_user,
    }


def applier(id: int, state: str, time: int = 30, command: str = "Slave_SQL") -> dict[str, Any]:
    return session(id, "system user", command, time, state, host="")


def trx(
    thread_id: int,
    trx_id: int | str,
    started: float,
    state: str = "RUNNING",
    query: str | None = None,
) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "trx_id": trx_id,
        "state": state,
        "started_ts": started,
        "rows_modified": 0,
        "rows_locked": 1,
        "wait_started_ts": started if state == "LOCK WAIT" else None,
        "operation": "",
        "query": query,
    }


def listed(*rows: dict[str, Any], complete: bool = True) -> Sessions:
    return Sessions(rows, complete)


# --- the sessions ---------------------------------------------------------------------------


def test_sessions_tell_the_servers_threads_from_client_sessions() -> None:
    sessions = cr.parse_sessions(
        rs(
            tuple(session(0)),
            tuple(applier(7, MDL_WAIT).values()),
            tuple(applier(5, IDLE, command="Slave_IO").values()),
            tuple(session(40).values()),
        )
    )
    assert sessions.system == {5, 7} and sessions.complete
    assert [r["id"] for r in sessions.waiting(MDL_WAIT)] == [7]
    assert sessions.client(40) == sessions.by_id[40]
    assert sessions.client(7) is None  # a replication thread is no client session
    assert sessions.client(41) is None  # gone: the list was complete
    assert sessions.client(0) is None  # InnoDB's own transactions have no session


def test_a_cut_session_list_still_names_an_unlisted_session_without_details() -> None:
    full = rs(tuple(session(0)), *[tuple(session(i).values()) for i in range(cr.SESSIONS_MAX)])
    cut = cr.parse_sessions(full)
    assert not cut.complete
    assert cut.client(10_000) == {}


def test_the_server_compares_states_ignoring_case_and_trailing_spaces() -> None:
    sessions = listed(applier(7, "waiting for table metadata lock  "))
    assert [r["id"] for r in sessions.waiting(MDL_WAIT)] == [7]


# --- the applier's transactions ---------------------------------------------------------------


def test_only_the_applier_threads_transactions_by_thread_id() -> None:
    rows = [trx(40, 900, 100.0), trx(9, 902, 102.0, "LOCK WAIT"), trx(7, 901, 101.0)]
    found = cr.applier_transaction_records(rows, {7: "", 9: "uuid:5"})
    assert [(r["thread_id"], r["gtid"]) for r in found] == [(7, ""), (9, "uuid:5")]


@pytest.mark.parametrize("dialect", [MARIADB, MYSQL_57], ids=lambda d: d.name)
def test_information_schema_flavors_take_the_appliers_from_the_sessions(dialect: Any) -> None:
    sessions = listed(applier(7, "Update_rows_log_event::find_row()"), session(40))
    rows = rs(
        tuple(trx(0, 0, 0)), tuple(trx(40, 900, 1.0).values()), tuple(trx(7, 901, 2.0).values())
    )
    (found,) = cr.parse_transactions(dialect, (rows,), sessions)
    assert (found.thread_id, found.trx_id, found.gtid) == (7, "901", "")
    assert cr.parse_transactions(dialect, (rows,), None) == ()


# --- row-lock blockers --------------------------------------------------------------------------


def _waits(*pairs: tuple[int, int, str]) -> list[dict[str, Any]]:
    return [
        {"requesting_trx_id": r, "blocking_trx_id": b, "blocking_lock_id": lock}
        for r, b, lock in pairs
    ]


def test_a_row_blocker_is_the_blocking_transactions_session_with_the_locked_table() -> None:
    sessions = listed(
        applier(7, "Update_rows_log_event::find_row()"), session(40, statement=None, time=90)
    )
    rows = [trx(7, "901", 200.0, "LOCK WAIT"), trx(40, "900", 100.0)]
    locks = [{"lock_id": "900:5:3:2", "lock_table": "`shop`.`orders`"}]
    (found,) = cr.row_blocker_records(_waits((901, 900, "900:5:3:2")), rows, locks, sessions)
    assert found == {
        "thread_id": 40,
        "blocked_thread_id": 7,
        "user": "app",
        "host": "10.0.0.9:5000",
        "command": "Sleep",
        "time_s": 90.25,
        "state": "",
        "statement": None,
        "trx_started_ts": 100.0,
        "object_name": "`shop`.`orders`",
    }
    (blocker,) = cr.row_blockers([found])
    assert blocker.object_name == "shop.orders" and blocker.lock == "row" and blocker.certain


def test_a_blockers_statement_falls_back_to_its_transactions() -> None:
    """``COALESCE(p.INFO, b.trx_query)``: an idle session shows none, a session not listed
    shows nothing at all (``LEFT JOIN``), its transaction may still say."""
    sessions = listed(
        applier(7, "x"), session(40, statement=None), session(41, statement="SELECT 1")
    )
    rows = [
        trx(7, 901, 2.0, "LOCK WAIT"),
        trx(40, 900, 1.0, query="UPDATE t SET v = 1"),
        trx(41, 903, 1.0, query="ignored: the session says"),
        trx(42, 904, 1.0, query="DELETE FROM t"),
    ]
    found = cr.row_blocker_records(
        _waits((901, 900, "a"), (901, 903, "b"), (901, 904, "c")), rows, [], sessions
    )
    assert [(r["thread_id"], r["statement"], r["user"]) for r in found] == [
        (40, "UPDATE t SET v = 1", "app"),
        (41, "SELECT 1", "app"),
        (42, "DELETE FROM t", None),  # named, no session details
    ]
    assert all(r["object_name"] is None for r in found)  # no INNODB_LOCKS row: NULL


def test_only_waits_of_the_replication_threads_and_of_live_transactions() -> None:
    sessions = listed(applier(7, "x"), session(40), session(50))
    rows = [trx(7, 901, 2.0), trx(40, 900, 1.0), trx(50, 950, 1.0)]
    waits = _waits(
        (950, 900, "a"),  # a client session waits: not the applier's business
        (901, 999, "b"),  # the blocking transaction ended between the reads
        (998, 900, "c"),  # the waiting one did
        (901, 900, "d"),
    )
    found = cr.row_blocker_records(waits, rows, [], sessions)
    assert [(r["blocked_thread_id"], r["thread_id"]) for r in found] == [(7, 40)]


def test_row_blockers_come_by_waiting_then_blocking_thread() -> None:
    sessions = listed(
        applier(7, "x"), applier(8, "x", command="Slave_worker"), session(40), session(41)
    )
    rows = [trx(7, 1, 0), trx(8, 2, 0), trx(40, 3, 0), trx(41, 4, 0)]
    waits = _waits((2, 3, "a"), (1, 4, "b"), (1, 3, "c"))
    found = cr.row_blocker_records(waits, rows, [], sessions)
    assert [(r["blocked_thread_id"], r["thread_id"]) for r in found] == [(7, 40), (7, 41), (8, 40)]


def test_mysql_80_blockers_take_their_transactions_start_and_statement() -> None:
    blockers: list[dict[str, Any]] = [
        {"thread_id": 40, "blocked_thread_id": 18, "statement": None, "blocking_trx_id": 900},
        {"thread_id": 41, "blocked_thread_id": 18, "statement": "SELECT 2", "blocking_trx_id": 903},
        {"thread_id": 42, "blocked_thread_id": 18, "statement": None, "blocking_trx_id": 999},
    ]
    rows = [trx(40, "900", 1.0, query="UPDATE t"), trx(41, "903", 3.0, query="x")]
    found = cr.blocking_trx_records(blockers, rows)
    assert [(r["statement"], r["trx_started_ts"]) for r in found] == [
        ("UPDATE t", 1.0),
        ("SELECT 2", 3.0),
        (None, None),
    ]


# --- metadata-lock holders (MariaDB with METADATA_LOCK_INFO) ------------------------------------


def _lock(thread_id: int, schema: str | None, table: str | None) -> dict[str, Any]:
    return {"thread_id": thread_id, "table_schema": schema, "table_name": table}


def test_holders_are_the_sessions_locking_a_table_the_waiting_applier_holds() -> None:
    sessions = listed(applier(7, MDL_WAIT), session(40), session(41), session(42))
    locks = [
        _lock(7, "shop", "orders"),  # the ALTER's SHARED_UPGRADABLE
        _lock(40, "shop", "orders"),
        _lock(40, "shop", "orders"),  # a second lock on it: one row (DISTINCT)
        _lock(41, "shop", "items"),  # another table
        _lock(42, "shop", "Orders"),  # another table, on a case-sensitive file system
    ]
    found = cr.mdl_holder_records(locks, [trx(40, 900, 5.0)], sessions)
    assert [(r["thread_id"], r["blocked_thread_id"], r["object_name"]) for r in found] == [
        (40, 7, "shop.orders")
    ]
    assert found[0]["trx_started_ts"] == 5.0 and found[0]["certain"] == 1


def test_holders_leave_out_the_servers_threads_and_gone_sessions_and_null_names() -> None:
    sessions = listed(applier(7, MDL_WAIT), applier(8, "x", command="Slave_worker"), session(40))
    locks = [
        _lock(7, "shop", "orders"),
        _lock(7, None, None),
        _lock(8, "shop", "orders"),  # a replication thread: not a client session
        _lock(41, "shop", "orders"),  # gone since the sessions were listed
        _lock(40, None, None),  # a NULL name equals nothing
    ]
    assert cr.mdl_holder_records(locks, [], sessions) == []
    cut = listed(applier(7, MDL_WAIT), applier(8, "x", command="Slave_worker"), complete=False)
    (unlisted,) = cr.mdl_holder_records(locks, [], cut)
    assert unlisted["thread_id"] == 41 and unlisted["user"] is None


def test_no_holder_without_an_applier_waiting_for_a_table_lock() -> None:
    sessions = listed(applier(7, "Waiting for backup lock"), session(40))
    locks = [_lock(7, "shop", "orders"), _lock(40, "shop", "orders")]
    assert cr.mdl_holder_records(locks, [], sessions) == []


# --- metadata-lock candidates (MariaDB without the plugin) ---------------------------------------


def test_candidates_are_the_sessions_in_a_transaction_begun_before_the_wait() -> None:
    """``trx_started <= NOW() - INTERVAL a.TIME SECOND``: NOW() to the second."""
    sessions = listed(applier(7, MDL_WAIT, time=30), session(40), session(41), session(42))
    rows = [trx(40, 1, 970.0), trx(41, 2, 971.0), trx(42, 3, 900.0), trx(7, 4, 100.0)]
    found = cr.mdl_candidate_records(rows, sessions, server_now=1000.6)
    assert [(r["thread_id"], r["blocked_thread_id"], r["certain"]) for r in found] == [
        (40, 7, 0),
        (42, 7, 0),
    ]
    assert found[0]["trx_started_ts"] == 970.0 and found[0]["object_name"] == ""


def test_candidates_per_waiting_thread_by_thread_id() -> None:
    sessions = listed(
        applier(8, MDL_WAIT, time=5, command="Slave_worker"),
        applier(7, MDL_WAIT, time=60),
        session(41),
        session(40),
    )
    rows = [trx(41, 1, 990.0), trx(40, 2, 930.0), trx(43, 3, 930.0)]  # 43: gone
    found = cr.mdl_candidate_records(rows, sessions, server_now=1000.0)
    assert [(r["blocked_thread_id"], r["thread_id"]) for r in found] == [(7, 40), (8, 40), (8, 41)]


def test_mdl_parse_tells_the_form_sent_by_its_answers() -> None:
    """The probe may answer in the batch that sent the candidates' form: the answers say which
    form it was, not what the probe says now."""
    sessions = listed(applier(7, MDL_WAIT, time=30), session(40))
    trx_part = rs(tuple(trx(0, 0, 0)), tuple(trx(40, 1, 900.0).values()))
    (candidate,) = cr.parse_mdl_blockers((trx_part,), sessions, 1000.0)
    assert (candidate.lock, candidate.certain, candidate.thread_id) == ("metadata", False, 40)
    locks = rs(tuple(_lock(0, "", "")), (7, "shop", "orders"), (40, "shop", "orders"))
    (holder,) = cr.parse_mdl_blockers((locks, trx_part), sessions, 1000.0)
    assert (holder.certain, holder.object_name, holder.trx_started_at) == (
        True,
        "shop.orders",
        900.0,
    )


# --- backup lock holders ------------------------------------------------------------------------


def test_backup_holders_are_named_once_for_each_waiting_applier() -> None:
    sessions = listed(
        applier(7, "Waiting for backup lock"),
        applier(8, "Waiting for backup lock", command="Slave_worker"),
        session(40, user="backup"),
    )
    holders = [{"holder_thread_id": 40}, {"holder_thread_id": 40}, {"holder_thread_id": 7}]
    found = cr.backup_holder_records(holders, [trx(40, 1, 50.0)], sessions)
    assert [(r["blocked_thread_id"], r["thread_id"], r["object_type"]) for r in found] == [
        (7, 40, "BACKUP LOCK"),
        (8, 40, "BACKUP LOCK"),
    ]
    assert {b.lock for b in cr.mdl_blockers(found)} == {"backup"}


# --- the sessions that could hold what an applier waits for -------------------------------------


def test_lock_sessions_while_an_applier_waits_longest_in_their_command_first() -> None:
    sessions = listed(
        applier(5, "Waiting for master to send event", command="Slave_IO"),
        applier(7, "Waiting for backup lock"),
        session(40, time=31),
        session(41, time=120, command="Query", statement="SELECT 1"),
        session(42, time=31),
        session(43, user="lagscope", time=500, own_user=1),  # the monitoring user's
        session(44, user="event_scheduler", command="Daemon", time=900),
        session(45, user="system user", command="Daemon", time=900),
    )
    found = cr.lock_session_records([trx(42, 1, 3.0)], sessions)
    assert [(r["thread_id"], r["blocked_thread_id"]) for r in found] == [(41, 7), (40, 7), (42, 7)]
    assert [r["trx_started_ts"] for r in found] == [None, None, 3.0]
    assert found[0]["statement"] == "SELECT 1" and found[0]["certain"] == 0


@pytest.mark.parametrize(
    "state",
    [
        IDLE,
        "Waiting for work from SQL thread",
        "Waiting for prior transaction to commit",
        "Waiting until MASTER_DELAY seconds after master executed event",
        "",
        None,
    ],
)
def test_no_lock_sessions_while_every_applier_is_at_rest(state: str | None) -> None:
    sessions = listed(applier(7, state or ""), session(40))
    sessions.by_id[7] = {**sessions.by_id[7], "state": state}
    assert cr.lock_session_records([], sessions) == []


def test_lock_sessions_are_at_most_twenty_of_the_first_waiting_applier() -> None:
    many = [session(100 + i, time=i) for i in range(30)]
    sessions = listed(
        applier(9, "Waiting for global read lock", command="Slave_worker"),
        applier(8, "Waiting for global read lock", command="Slave_worker"),
        *many,
    )
    found = cr.lock_session_records([], sessions)
    assert len(found) == cr.LOCK_SESSIONS_MAX
    assert {r["blocked_thread_id"] for r in found} == {8}
    assert [r["thread_id"] for r in found[:2]] == [129, 128]


def test_mysql_rows_take_their_sessions_transaction_start() -> None:
    rows = [{"thread_id": 40, "blocked_thread_id": 17}, {"thread_id": 41, "blocked_thread_id": 17}]
    found = cr.with_trx_started(rows, [trx(41, 1, 8.0), trx(41, 2, 9.0)])
    assert [r["trx_started_ts"] for r in found] == [None, 8.0]
