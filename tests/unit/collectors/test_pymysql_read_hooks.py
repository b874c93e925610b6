"""The PyMySQL internals the bounded reads stand on (collectors/connection.py), as they were
when written: an override that no longer matches is silently never called, and a 400 MB packet
or a trickle would again be read whole. This fails the day one is gone or reshaped."""

from __future__ import annotations

import inspect

import pymysql.connections

from lagscope.collectors.connection import _Connection
from tests.unit.collectors.test_pymysql_hooks import OVERRIDDEN as RECORDED

PyMySQL = pymysql.connections.Connection

# The bounded reads' overrides, with the signatures recorded against PyMySQL 1.2.
OVERRIDDEN = {name: RECORDED[name] for name in ("_read_bytes", "connect")}
CALLED = {"_force_close": "(self)"}


def test_the_overridden_and_called_methods_keep_their_signatures():
    for name, signature in {**OVERRIDDEN, **CALLED}.items():
        found = getattr(PyMySQL, name, None)
        assert found is not None, f"{name} is gone from PyMySQL's Connection"
        assert str(inspect.signature(found)) == signature, name
    for name in OVERRIDDEN:
        assert name in vars(_Connection), f"{name} is no longer overridden"


def test_every_packet_is_read_through_read_bytes_and_the_reader_is_assigned_where_we_wrap_it():
    read_packet = inspect.getsource(PyMySQL._read_packet)
    # The header first, then the body by the header's length: the cap sees the length first.
    assert "packet_header = self._read_bytes(4)" in read_packet
    assert "recv_data = self._read_bytes(bytes_to_read)" in read_packet
    # The timeout PyMySQL puts back after the deadline lowered it.
    assert "self._current_timeout != self._read_timeout" in read_packet
    assert "self._rfile.read(num_bytes)" in inspect.getsource(PyMySQL._read_bytes)
    # Both places a socket's reader is made go through the _rfile attribute we wrap.
    assert 'self._rfile = sock.makefile("rb")' in inspect.getsource(PyMySQL.connect)
    assert 'self._rfile = self._sock.makefile("rb")' in inspect.getsource(
        PyMySQL._request_authentication
    )
    assert isinstance(vars(_Connection)["_rfile"], property)
