"""A server answering oddly costs only its own poll: every answer of the corpus
(tests/unit/fakes/odd_mysql.py), played by a protocol-level fake MariaDB to the real PyMySQL
client, ends in a clear state — an ``UnexpectedAnswer`` naming the reading, or the lost
connection — never in a parser's exception; the connection is closed after it, the next poll
reconnects, memory stays bounded and a trickle is cut off at the deadline."""

from __future__ import annotations

import threading
import time
import tracemalloc

import pytest

from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.poller import InstancePoller
from lagscope.errors import CollectorError, ServerUnreachable
from tests.unit.fakes import odd_mysql
from tests.unit.fakes.odd_mysql import BY_NAME, CORPUS, OddAnswer, OddMySQL, huge_packet

pytestmark = pytest.mark.slow


def _poller(port: int, read_timeout_s: float = 2.0) -> InstancePoller:
    spec = ConnectionSpec("127.0.0.1", port, "lagscope", "pw", read_timeout_s=read_timeout_s)
    return InstancePoller(PyMySQLExecutor(spec))


def _poll(poller: InstancePoller) -> Exception | None:
    # Any exception, not only the collectors': what escaped before is what is checked.
    try:
        poller.poll()
    except Exception as exc:
        return exc
    return None


def _unexpected(error: Exception | None) -> bool:
    return isinstance(error, CollectorError) and type(error).__name__ == "UnexpectedAnswer"


def test_the_fake_plays_the_caps_the_collectors_enforce():
    from lagscope.collectors import answer_limits

    assert odd_mysql.PACKET_BYTES == answer_limits.PACKET_BYTES
    assert odd_mysql.ANSWER_BYTES == answer_limits.ANSWER_BYTES


@pytest.mark.parametrize("answer", CORPUS, ids=lambda a: a.name)
def test_an_odd_answer_is_a_clear_state_and_the_next_poll_reconnects(answer: OddAnswer):
    with OddMySQL(answer) as fake:
        poller = _poller(fake.port)
        try:
            for attempt in (1, 2):
                error = _poll(poller)
                if answer.expect == "unexpected":
                    assert _unexpected(error), (attempt, repr(error))
                    assert str(error).startswith(f"127.0.0.1:{fake.port}: unexpected answer: ")
                    assert getattr(error, "reading", None) is not None
                    assert str(error).isprintable()
                elif answer.expect == "unreachable":
                    assert isinstance(error, ServerUnreachable), (attempt, repr(error))
                else:
                    assert error is None or _unexpected(error), repr(error)
                if error is not None:
                    # The protocol's state is unknown: closed, and opened again next poll.
                    assert not poller.executor.connected  # type: ignore[attr-defined]
            if answer.expect != "any":
                assert fake.connections == 2
        finally:
            poller.close()


def test_one_result_set_where_several_are_due_names_the_missing_reading():
    with OddMySQL(BY_NAME["one_result_set"]) as fake:
        poller = _poller(fake.port)
        try:
            error = _poll(poller)
        finally:
            poller.close()
    assert _unexpected(error), repr(error)
    assert getattr(error, "reading", None) == "replica_status"
    assert "1 result set(s) where 5 were due" in str(error)


def test_an_empty_server_state_says_so():
    with OddMySQL(BY_NAME["no_row"]) as fake:
        poller = _poller(fake.port)
        try:
            error = _poll(poller)
        finally:
            poller.close()
    assert _unexpected(error), repr(error)
    assert str(error).endswith(
        "unexpected answer: server_state: ValueError: 0 rows where one was due"
    )


def test_a_packet_over_the_cap_is_refused_on_its_header_without_reading_its_body():
    sent = huge_packet(1)  # built before memory is traced: the fake's bytes are not the poll's
    huge = OddAnswer("huge_packet", lambda n: sent, "unexpected")
    with OddMySQL(huge) as fake:
        poller = _poller(fake.port)
        tracemalloc.start()
        try:
            error = _poll(poller)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            poller.close()
    # The 32 MiB sent were never held: what the poll allocated is a small fraction of one.
    assert peak < 4 * 1024 * 1024, f"{peak} bytes held"
    assert _unexpected(error), repr(error)
    assert "over 4194304 bytes (the cap per packet)" in str(error)


def test_bytes_trickled_slower_than_the_deadline_are_cut_off_and_the_connection_closed():
    # About 25 s to send the whole answer, one byte every 50 ms: each recv returns long
    # before the socket's timeout, so only an overall deadline stops it.
    with OddMySQL(BY_NAME["trickled"]) as fake:
        poller = _poller(fake.port, read_timeout_s=1.0)
        outcome: list[Exception | None] = []
        started = time.monotonic()
        thread = threading.Thread(target=lambda: outcome.append(_poll(poller)), daemon=True)
        thread.start()
        thread.join(timeout=15)
        held_s = time.monotonic() - started
        poller.close()
    assert outcome, f"the poll was still reading after {held_s:.0f} s"
    error = outcome[0]
    assert _unexpected(error), repr(error)
    assert "did not arrive within 1.0 s" in str(error)
