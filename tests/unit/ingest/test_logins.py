"""Refused logins to monitored servers back off; unreadable credentials are flagged per instance."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine
from sqlalchemy.orm import Session

from lagscope.collectors.executor import ConnectionSpec
from lagscope.collectors.heartbeat_writer import HeartbeatWriter
from lagscope.errors import ClearTextAuthRefused, CollectorError, LoginRefused, Sha2AuthRefused
from lagscope.ingest import login_backoff
from lagscope.ingest.reader import ClusterReader, PollResult, Target
from lagscope.inventory import instances as inventory
from lagscope.inventory import server_logins as logins
from lagscope.models import Base, Instance
from lagscope.security.secret_box import SecretBox

T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def instance() -> Instance:
    return Instance(id=7, name="r", host="h", port=1, user="u", login_failures=0)


def refused(at: datetime) -> PollResult:
    return PollResult(7, at.timestamp(), error="h:1: Access denied", error_kind="LoginRefused")


def test_delays_double_from_the_base_and_stop_at_the_cap():
    backoff = logins.Backoff(base_s=1.0, max_s=300.0)
    assert [backoff.delay_s(n) for n in range(1, 12)] == [
        1,
        2,
        4,
        8,
        16,
        32,
        64,
        128,
        256,
        300,
        300,
    ]
    assert backoff.delay_s(10_000) == 300


def test_refusals_schedule_the_next_try_and_a_login_resets():
    row, backoff = instance(), logins.Backoff(base_s=1.0, max_s=300.0)
    at = T0
    for n, expected in enumerate([1, 2, 4, 8], start=1):
        login_backoff.note(row, refused(at), backoff)
        assert row.login_state == logins.ACCESS_DENIED and row.login_failures == n
        assert row.next_attempt_at == at + timedelta(seconds=expected)
        assert logins.waiting(row, at + timedelta(seconds=expected - 0.5))
        assert not logins.waiting(row, at + timedelta(seconds=expected))
        at += timedelta(seconds=expected)
    # The server was down at the next try: nothing is known about the password, nothing counts.
    login_backoff.note(
        row, PollResult(7, at.timestamp(), error="x", error_kind="ServerUnreachable"), backoff
    )
    assert row.login_failures == 4 and row.login_state == logins.ACCESS_DENIED
    # A statement refused after login: the credentials work.
    login_backoff.note(
        row, PollResult(7, at.timestamp(), error="x", error_kind="AccessDenied"), backoff
    )
    assert (row.login_state, row.login_failures, row.next_attempt_at) == (logins.OK, 0, None)


@pytest.mark.parametrize("kind", ["ClearTextAuthRefused", "Sha2AuthRefused"])
def test_a_withheld_password_backs_off_like_a_refused_one(kind):
    """Lagscope dropped the handshake rather than send the password: MySQL counts every such
    connection towards max_connect_errors (the host is blocked after 100), and nothing changes
    before someone edits the instance, so it is not retried every tick either."""
    row, backoff = instance(), logins.Backoff(base_s=1.0, max_s=300.0)
    withheld = PollResult(7, T0.timestamp(), error="h:1: server asked for …", error_kind=kind)
    login_backoff.note(row, withheld, backoff)
    assert row.login_state == logins.ACCESS_DENIED and row.login_failures == 1
    assert logins.waiting(row, T0 + timedelta(seconds=0.5))


def test_unreadable_credentials_and_their_recovery():
    row, backoff = instance(), logins.DEFAULT_BACKOFF
    login_backoff.note(row, login_backoff.unreadable(row, T0, "no key"), backoff)
    assert row.login_state == logins.CREDENTIALS_UNREADABLE
    assert not logins.waiting(row, T0)  # nothing was sent: no back-off, re-checked every tick
    later = PollResult(7, T0.timestamp(), error="down", error_kind="ServerUnreachable")
    login_backoff.note(row, later, backoff)
    assert row.login_state is None


def test_new_credentials_reset_the_back_off():
    row = instance()
    for _ in range(5):
        login_backoff.note(row, refused(T0), logins.DEFAULT_BACKOFF)
    logins.reset(row)
    assert (row.login_state, row.login_failures, row.next_attempt_at) == (None, 0, None)
    assert not logins.waiting(row, T0)


class SlowRefusal:
    """A server whose failed logins are delayed (the connection-control plugin)."""

    def __init__(self, spec: ConnectionSpec) -> None:
        self.server = spec.server
        self.release = threading.Event()
        self.attempts = 0

    def run(self, statements):
        self.attempts += 1
        self.release.wait(10)
        raise LoginRefused(self.server, "Access denied for user 'u'@'h'", 1045)

    def close(self) -> None:
        pass


def test_a_refusal_slower_than_the_deadline_is_reported_at_the_next_tick():
    made: list[SlowRefusal] = []

    def factory(spec: ConnectionSpec) -> SlowRefusal:
        made.append(SlowRefusal(spec))
        return made[-1]

    reader = ClusterReader(executor_factory=factory)
    target = Target(7, ConnectionSpec("h", 1))
    try:
        first = reader.read([target], deadline_s=0.05)
        assert first[0].error_kind == "ServerUnreachable"  # no answer within the deadline
        made[0].release.set()
        deadline = time.monotonic() + 10
        second: list[PollResult] = []
        while time.monotonic() < deadline:
            second = reader.read([target], deadline_s=0.05)
            if second[0].error_kind == "LoginRefused":
                break
        assert second[0].error_kind == "LoginRefused"
        assert made[0].attempts == 1  # reported, not tried again
    finally:
        reader.close()


class RefusingExecutor:
    """The heartbeat login's server: refuses every login (or Lagscope withholds the password
    from it), counting them."""

    def __init__(self, spec: ConnectionSpec, error: type[CollectorError] = LoginRefused) -> None:
        self.server = spec.server
        self.connected = False
        self.logins = 0
        self.error = error

    def run(self, statements):
        self.logins += 1
        raise self.error(self.server, "Access denied for user 'hb'@'h'", 1045)

    def write(self, sql, args=()):
        raise AssertionError("never reached: the login is refused first")

    def close(self) -> None:
        pass


@pytest.mark.parametrize("error", [LoginRefused, ClearTextAuthRefused, Sha2AuthRefused])
def test_the_heartbeat_writer_ends_at_a_refused_login_and_says_so(error):
    """One login, then the run ends: when to try again is the store's back-off (ingest/
    heartbeat.py), not this thread's memory. A password Lagscope withheld (clear-text or SHA-2
    without a verified server) ends it alike: the dropped handshake counts on the server."""
    made: list[RefusingExecutor] = []

    def factory(spec: ConnectionSpec) -> RefusingExecutor:
        made.append(RefusingExecutor(spec, error))
        return made[-1]

    writer = HeartbeatWriter(ConnectionSpec("h", 1), executor_factory=factory)  # type: ignore[arg-type]
    refusals: list[CollectorError] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=writer.run, args=(0.01, stop), kwargs={"on_refused": refusals.append}
    )
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and not stop.is_set()
    assert made[0].logins == 1 and len(refusals) == 1
    assert isinstance(writer.last_error, error)


def test_refusals_give_up_after_the_cap_until_someone_acts():
    row, backoff = instance(), logins.Backoff(base_s=1.0, max_s=300.0, give_up_after=10)
    at = T0
    recorded = []
    for _ in range(10):
        recorded.append(login_backoff.note(row, refused(at), backoff))
        assert row.login_state == logins.ACCESS_DENIED
        if row.next_attempt_at is not None:
            at = row.next_attempt_at
    assert row.login_failures == 10 and row.next_attempt_at is None
    # Ten tries over 1 + 2 + … + 256 s, then none: waiting, however long nobody looks.
    assert (at - T0).total_seconds() == 511
    assert logins.waiting(row, at + timedelta(days=365))
    assert recorded[8].error == "h:1: Access denied"  # the ninth still backs off
    said = recorded[9].error
    assert said is not None and said.startswith("h:1: Access denied (login refused 10 times")
    assert "not tried again until the instance's password is edited" in said
    assert "POST /api/v1/instances/7/retry-login" in said
    row.last_error = said
    assert login_backoff.backing_off(row, at).error == said  # kept as it is, tick after tick
    logins.reset(row)  # a new password, re-enabled, or retry-login
    assert not logins.waiting(row, at) and row.login_failures == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "change",
    [{"tls": "verify_identity"}, {"tls": "required"}],
)
def test_a_stronger_tls_resets_the_back_off(tmp_path, change):
    """A withheld password waits for someone to act; raising TLS is such an act, and needs no
    password (a pin does, and so resets anyway): a reset tied to the password alone would keep
    the instance waiting."""
    engine = create_engine(f"sqlite:///{tmp_path / 'store.db'}")
    Base.metadata.create_all(engine)
    box = SecretBox("a-test-key-long-enough-for-the-kdf-0123", b"0" * 16)
    with Session(engine) as session, session.begin():
        cluster = inventory.create_cluster(session, "c")
        row = inventory.add_instance(session, box, cluster, "r", "h", 1, "u", "pw")
        for _ in range(3):
            login_backoff.note(
                row,
                PollResult(row.id, T0.timestamp(), error="x", error_kind="Sha2AuthRefused"),
                logins.DEFAULT_BACKOFF,
            )
        assert logins.waiting(row, T0)
        inventory.update_instance(session, box, row, change)
        assert (row.login_state, row.login_failures, row.next_attempt_at) == (None, 0, None)
        inventory.update_instance(session, box, row, {"region": "far"})  # no reset by itself
    engine.dispose()
