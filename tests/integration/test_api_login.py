"""Logging in under attack (docs/security.md, "Logging in"): throttling with back-off per
(username, client address) and per address — never a lock on a username alone — answers that
do not tell which usernames exist, a bounded password-hashing pool, and failed logins in the
log without the password."""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from lagscope.models import LoginThrottle
from lagscope.security import users

from .api_stack import ADMIN, ApiServer, api_server, sqlite_url
from .waiting import wait_until

pytestmark = pytest.mark.integration

PASSWORD = "a-long-password"


@pytest.fixture(scope="module")
def lenient(tmp_path_factory) -> Iterator[ApiServer]:
    """No back-off in reach: for timing and load, where throttling would answer first."""
    with api_server(
        sqlite_url(tmp_path_factory.mktemp("api-login-lenient")),
        login_free_failures_user=10_000,
        login_free_failures_address=10_000,
    ) as server:
        yield server


def add_user(api: ApiServer, username: str) -> None:
    with api.sessions() as session, session.begin():
        users.create_user(session, username, PASSWORD, "viewer")


def attempt(
    api: ApiServer,
    username: str,
    password: str,
    timeout_s: float = 30.0,
    source: str = "127.0.0.1",
) -> httpx.Response:
    """A login from ``source``, a loopback address the client binds to (Linux routes all of
    127.0.0.0/8 to the server on 127.0.0.1): another address is another client."""
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(base_url=api.url, transport=transport) as anonymous:
        return anonymous.post(
            "/api/v1/auth/login",
            json={"username": username, "password": password},
            timeout=timeout_s,
        )


def throttle_row(api: ApiServer, key: str) -> LoginThrottle | None:
    with api.sessions() as session:
        return session.get(LoginThrottle, key)


def hold_block(api: ApiServer, key: str, seconds: float) -> None:
    """Move a block's end, so what the test checks while blocked (or after) does not race
    the first back-off's single second on a saturated machine."""
    with api.sessions() as session, session.begin():
        row = session.get(LoginThrottle, key)
        assert row is not None and row.blocked_until is not None, key
        row.blocked_until = datetime.now(UTC) + timedelta(seconds=seconds)


def test_repeated_failures_for_a_username_back_off_with_429(api: ApiServer, caplog):
    add_user(api, "victim")
    caplog.set_level(logging.WARNING, logger="lagscope.auth")
    for _ in range(6):  # five are free, the sixth starts a back-off
        assert attempt(api, "victim", "guess-guess-guess").status_code == 401
    row = throttle_row(api, "user:victim|127.0.0.1")
    assert row is not None and row.failures == 6 and row.blocked_until is not None
    hold_block(api, "user:victim|127.0.0.1", 30)
    # From that client even the right password waits, in any case of the name.
    blocked = attempt(api, "Victim", PASSWORD)
    assert blocked.status_code == 429, blocked.text
    assert int(blocked.headers["retry-after"]) >= 1
    assert blocked.json()["type"] == "/problems/throttled"
    hold_block(api, "user:victim|127.0.0.1", -1)
    ok = wait_until(
        lambda: (r := attempt(api, "victim", PASSWORD)).status_code == 200 and r,
        timeout_s=30,
        message="the back-off to end",
    )
    assert ok.json()["token"]
    failures = [r.getMessage() for r in caplog.records if "failed login" in r.getMessage()]
    assert len(failures) >= 6
    assert all("'victim'" in m and "127.0.0.1" in m for m in failures)
    assert not any("guess-guess-guess" in r.getMessage() for r in caplog.records)


def test_nobody_locks_out_the_admin_from_another_address(api: ApiServer):
    """Wrong passwords from address A throttle A, not the username: the
    right password from address B works at once."""
    for _ in range(7):
        answer = attempt(api, ADMIN[0], "guess-guess-guess", source="127.0.0.2")
        assert answer.status_code in (401, 429), answer.text
    row = throttle_row(api, "user:admin|127.0.0.2")
    assert row is not None and row.blocked_until is not None
    hold_block(api, "user:admin|127.0.0.2", 30)
    assert attempt(api, ADMIN[0], ADMIN[1], source="127.0.0.2").status_code == 429  # A waits
    from_b = attempt(api, ADMIN[0].upper(), ADMIN[1], source="127.0.0.3")
    assert from_b.status_code == 200, from_b.text
    assert throttle_row(api, "user:admin|127.0.0.3") is None
    assert throttle_row(api, "user:admin") is None  # no lock on the name alone


def test_failures_from_one_address_back_off_across_usernames(tmp_path):
    with api_server(sqlite_url(tmp_path), login_free_failures_address=3) as api:
        answers = [attempt(api, f"nobody{i}", "guess-guess-guess").status_code for i in range(4)]
        assert answers == [401, 401, 401, 401]
        row = throttle_row(api, "addr:127.0.0.1")
        assert row is not None and row.blocked_until is not None  # the fourth began a back-off
        hold_block(api, "addr:127.0.0.1", 30)
        assert attempt(api, "someone-else", "guess-guess-guess").status_code == 429


def test_unknown_and_known_usernames_take_the_same_time(lenient: ApiServer):
    add_user(lenient, "known")
    timings: dict[str, list[float]] = {"known": [], "unknown": []}
    with lenient.client("") as anonymous:
        for i in range(22):  # interleaved, so machine noise falls on both alike
            for name in ("known", "unknown") if i % 2 else ("unknown", "known"):
                started = time.perf_counter()
                answer = anonymous.post(
                    "/api/v1/auth/login",
                    json={
                        "username": name if name == "known" else f"ghost{i}",
                        "password": "x" * 12,
                    },
                )
                elapsed = time.perf_counter() - started
                assert answer.status_code == 401
                assert answer.json()["detail"] == "wrong username or password"
                if i >= 2:  # the first rounds warm up connections and the hasher
                    timings[name].append(elapsed)
    known = statistics.median(timings["known"])
    unknown = statistics.median(timings["unknown"])
    print(f"login median: known {known * 1000:.1f} ms, unknown {unknown * 1000:.1f} ms")
    assert abs(known - unknown) <= 0.2 * max(known, unknown), (known, unknown)


def test_forty_parallel_bad_logins_do_not_starve_other_requests(lenient: ApiServer):
    finished: list[float] = []
    lock = threading.Lock()

    def bad_login(i: int) -> None:
        # Forty checks through two slots on a saturated box can take minutes: the client
        # waits, since this test is about the listing not waiting, not about speed.
        response = attempt(lenient, f"flood{i}", "guess-guess-guess", timeout_s=600)
        assert response.status_code == 401
        with lock:
            finished.append(time.monotonic())

    threads = [threading.Thread(target=bad_login, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    with lenient.client() as c:
        # The flood is being served (two checks done, the rest queued) when the listing asks.
        wait_until(lambda: len(finished) >= 2, timeout_s=60, message="the flood to start")
        answered = c.get("/api/v1/clusters")
        assert answered.status_code == 200
        with lock:
            done_when_answered = len(finished)
    for thread in threads:
        thread.join(timeout=660)
    assert len(finished) == 40
    # Password checks queue behind a small limit; the listing did not wait for that queue.
    assert done_when_answered <= 30, done_when_answered
