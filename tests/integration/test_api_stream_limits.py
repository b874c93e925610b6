"""Live streams are limited per user and per API process, and a closed stream gives its slot
back: a stream holds a connection and a poll loop for as long as a tab is
open, so one user, or everyone together, must not be able to open them without end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import pytest

from .api_stack import ApiServer
from .waiting import wait_until

pytestmark = pytest.mark.integration

PER_USER, PER_PROCESS = 2, 3


@pytest.fixture(scope="module")
def api_settings() -> dict[str, object]:
    return {
        "streams_per_user": PER_USER,
        "streams_per_process": PER_PROCESS,
        "stream_recheck_s": 0.2,
    }


@pytest.fixture(scope="module")
def cluster_id(api: ApiServer) -> int:
    with api.client() as c:
        return int(c.post("/api/v1/clusters", json={"name": "streams"}).json()["id"])


def login(api: ApiServer, username: str) -> str:
    with api.client() as admin:
        created = admin.post(
            "/api/v1/users",
            json={"username": username, "password": "a-long-password-1", "role": "viewer"},
        )
        assert created.status_code == 201, created.text
    with api.client("") as anonymous:
        answer = anonymous.post(
            "/api/v1/auth/login", json={"username": username, "password": "a-long-password-1"}
        )
        return str(answer.json()["token"])


@dataclass
class Held:
    response: httpx.Response
    lines: Iterator[str]  # the stream's lines after the first
    close: Callable[[], None]

    @property
    def status_code(self) -> int:
        return self.response.status_code


class Streams:
    """Streams held open on their own connections until closed."""

    def __init__(self, api: ApiServer, cluster_id: int, stack: ExitStack) -> None:
        self.api, self.cluster_id, self.stack = api, cluster_id, stack

    def open(self, token: str | None = None) -> Held:
        own = ExitStack()
        client = own.enter_context(self.api.client(token))
        response = own.enter_context(
            client.stream("GET", "/api/v1/stream", params={"cluster_id": self.cluster_id})
        )
        lines = response.iter_lines()
        if response.status_code == 200:
            assert next(lines).startswith("retry:")  # the stream is open
        else:
            response.read()
        self.stack.callback(own.close)
        return Held(response, lines, own.close)


def test_streams_are_limited_per_user_and_per_process_and_given_back(api, cluster_id):
    viewer = login(api, "streamer")
    with ExitStack() as stack:
        streams = Streams(api, cluster_id, stack)
        first = streams.open()
        second = streams.open()
        assert (first.status_code, second.status_code) == (200, 200)
        third = streams.open().response
        assert third.status_code == 429, third.status_code
        assert third.headers["content-type"].startswith("application/problem+json")
        assert f"{PER_USER} live streams" in third.json()["detail"]
        assert int(third.headers["retry-after"]) >= 1

        mine = streams.open(viewer)  # another user: the process has one slot left
        assert mine.status_code == 200
        full = streams.open(viewer).response
        assert full.status_code == 503, full.status_code
        assert "this API process" in full.json()["detail"]

        first.close()  # the client goes away: its slot comes back
        again = wait_until(
            lambda: (r := streams.open()).status_code == 200 and r,
            timeout_s=15,
            message="a closed stream's slot to be given back",
        )
        assert again.status_code == 200
    # Every stream closed: all the slots are free again.
    with ExitStack() as stack:
        streams = Streams(api, cluster_id, stack)
        wait_until(lambda: streams.open().status_code == 200, timeout_s=15, message="slots freed")
        assert streams.open().status_code == 200
        assert streams.open(viewer).status_code == 200


def test_a_stream_ended_by_the_server_gives_its_slot_back(api, cluster_id):
    """A revoked token ends the stream from the server's side: that frees the slot too."""
    token = login(api, "revoked")
    with ExitStack() as stack:
        streams = Streams(api, cluster_id, stack)
        held = [streams.open(token) for _ in range(PER_USER)]
        assert [h.status_code for h in held] == [200] * PER_USER
        with api.client(token) as c:
            assert c.post("/api/v1/auth/logout").status_code == 204
        for stream in held:
            assert any(line.startswith("event: revoked") for line in stream.lines)
    relogged = login_again(api, "revoked")
    with ExitStack() as stack:
        streams = Streams(api, cluster_id, stack)
        opened = [streams.open(relogged).status_code for _ in range(PER_USER)]
        assert opened == [200] * PER_USER


def login_again(api: ApiServer, username: str) -> str:
    with api.client("") as anonymous:
        answer = anonymous.post(
            "/api/v1/auth/login", json={"username": username, "password": "a-long-password-1"}
        )
        return str(answer.json()["token"])
