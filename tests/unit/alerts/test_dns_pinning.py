"""DNS pinning at send time (issue 10, delivery): the webhook host is resolved once per attempt,
that address is checked against the allow-list, and the connection goes to it — a name that
resolves to something else a moment later (DNS rebinding) changes nothing.

A fake resolver stands in for DNS; the receiver is a real HTTP server on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lagscope.alerts.delivery_policy import address_allowed
from lagscope.config import Settings
from lagscope.services import alert_delivery
from tests.integration.receiver import Receiver, receiver

SETTINGS = Settings(
    secret_key="dns-pinning-test-5b7d9f1a3c5e7a9b1d3f",
    webhook_connect_timeout_s=5.0,
    webhook_read_timeout_s=5.0,
)
HOST = "hooks.example.test"


class FakeResolver:
    """Answers from a script, one answer per lookup (the last one repeats)."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers = list(answers)
        self.lookups: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append((host, port))
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


def _request(hook: Receiver, allow: tuple[str, ...], path: str = "/h") -> alert_delivery.Request:
    port = hook.url.rsplit(":", 1)[1]
    url = f"http://{HOST}:{port}{path}"
    return alert_delivery.Request(1, url, b'{"x":1}', {"Content-Type": "application/json"}, allow)


def test_connects_to_the_checked_address_resolved_once(hook: Receiver) -> None:
    # The first answer is the allowed loopback receiver; any later lookup would say the
    # metadata endpoint. Only one lookup happens, and the request reaches the receiver.
    resolver = FakeResolver(["127.0.0.1"], ["169.254.169.254"])
    outcome = alert_delivery.send(_request(hook, (HOST, "127.0.0.1")), SETTINGS, resolve=resolver)
    assert outcome.accepted, outcome
    assert [host for host, _ in resolver.lookups] == [HOST]
    (got,) = hook.all()
    assert got.headers["Host"].startswith(HOST)  # the name, not the address, in Host
    assert got.body == b'{"x":1}'


def test_a_name_that_resolves_inside_is_refused_without_connecting(hook: Receiver) -> None:
    # The name is allowed, but it now points at loopback, which the allow-list does not name.
    resolver = FakeResolver(["127.0.0.1"])
    outcome = alert_delivery.send(_request(hook, (HOST,)), SETTINGS, resolve=resolver)
    assert outcome.error and outcome.error.startswith("refused:") and "127.0.0.1" in outcome.error
    assert not outcome.retryable
    assert hook.all() == []


def test_a_resolver_failure_is_retryable() -> None:
    def broken(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    request = alert_delivery.Request(1, f"http://{HOST}/h", b"{}", {}, (HOST,))
    outcome = alert_delivery.send(request, SETTINGS, resolve=broken)
    assert outcome.error and "cannot resolve" in outcome.error and outcome.retryable


@pytest.mark.parametrize(
    ("address", "allow", "ok"),
    [
        ("93.184.215.14", [HOST], True),  # public: the allowed name is enough
        ("127.0.0.1", [HOST], False),  # loopback behind an allowed name
        ("169.254.169.254", [HOST], False),  # cloud metadata
        ("10.1.2.3", [HOST], False),
        ("10.1.2.3", [HOST, "10.0.0.0/8"], True),  # the admin named that network
        ("::1", [HOST, "::1"], True),
        ("93.184.215.14", ["other.example"], False),
        ("not-an-ip", [HOST], False),
    ],
)
def test_address_allowed(address: str, allow: list[str], ok: bool) -> None:
    assert address_allowed(HOST, address, allow) is ok
