"""Driver errors become the Lagscope error tree at the boundary."""

from __future__ import annotations

import socket

import pymysql.err
import pytest

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor, ResultSet, translate_error
from lagscope.errors import AccessDenied, LoginRefused, QueryFailed, ServerUnreachable


@pytest.mark.parametrize(
    ("exc", "kind", "code"),
    [
        (
            pymysql.err.OperationalError(
                2003, "Can't connect to MySQL server on 'x' ([Errno 111])"
            ),
            ServerUnreachable,
            2003,
        ),
        (
            pymysql.err.OperationalError(
                2013, "Lost connection to MySQL server during query (timed out)"
            ),
            ServerUnreachable,
            2013,
        ),
        (
            pymysql.err.OperationalError(
                1045, "Access denied for user 'mon'@'localhost' (using password: YES)"
            ),
            LoginRefused,
            1045,
        ),
        (
            pymysql.err.OperationalError(1698, "Access denied for user 'mon'@'h'"),
            LoginRefused,
            1698,
        ),
        (
            pymysql.err.OperationalError(
                4150, "User is blocked because of too many credential errors"
            ),
            LoginRefused,
            4150,
        ),
        (
            pymysql.err.OperationalError(
                3955, "Access denied for user 'mon'@'h'. Account is blocked for 1 day(s)"
            ),
            LoginRefused,
            3955,
        ),
        (pymysql.err.OperationalError(1862, "Your password has expired"), LoginRefused, 1862),
        (
            pymysql.err.OperationalError(
                1227, "Access denied; you need (at least one of) the PROCESS privilege(s)"
            ),
            AccessDenied,
            1227,
        ),
        (
            pymysql.err.ProgrammingError(1146, "Table 'lagscope.heartbeat' doesn't exist"),
            QueryFailed,
            1146,
        ),
        (pymysql.err.InterfaceError(0, ""), ServerUnreachable, None),
        (TimeoutError("timed out"), ServerUnreachable, None),
        (OSError(113, "No route to host"), ServerUnreachable, None),
        (ConnectionResetError(104, "Connection reset by peer"), ServerUnreachable, None),
    ],
)
def test_translate_error(exc, kind, code):
    error = translate_error("db:3306", exc)
    assert type(error) is kind
    assert error.code == code
    assert str(error).startswith("db:3306: ")


def test_password_is_never_in_repr():
    spec = ConnectionSpec(host="db", user="mon", password="s3cret")
    assert "s3cret" not in repr(spec)


def test_result_records_are_case_insensitive():
    result = ResultSet(("Slave_IO_Running", "Channel_Name"), (("Yes", "east"),))
    assert result.records() == [{"slave_io_running": "Yes", "channel_name": "east"}]


def test_refused_port_fails_fast_with_server_unreachable():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    executor = PyMySQLExecutor(ConnectionSpec(host="127.0.0.1", port=port, connect_timeout_s=1))
    with pytest.raises(ServerUnreachable) as info:
        executor.run(["SELECT 1"])
    assert info.value.server == f"127.0.0.1:{port}"
