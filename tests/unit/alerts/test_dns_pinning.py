"""DNS pinning at send time (docs/alerts.md): the webhook host is resolved once per attempt,
that address is checked against the allow-list, and the connection goes to it — a name that
resolves to something else a moment later (DNS rebinding) changes nothing.

A fake resolver stands in for DNS; the receiver is a real HTTP server on loopback."""

from __future__ import annotations

import ast
import inspect
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lagscope.alerts import delivery as alert_delivery
from lagscope.alerts import webhook_transport
from lagscope.alerts.delivery_policy import address_allowed
from lagscope.alerts.webhook_transport import PinnedTransport
from lagscope.config import Settings
from lagscope.lab.certs import make_ca
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_name_rebound_between_check_and_connect_does_not_get_the_request(hook: Receiver) -> None:
    # DNS rebinding. Two receivers on the same port: the checked one on 127.0.0.1, the
    # rebinding target on 127.0.0.2. The resolver answers 127.0.0.1 for the check and
    # 127.0.0.2 for any later lookup; the request reaches the checked address only.
    port = int(hook.url.rsplit(":", 1)[1])
    with receiver("127.0.0.2", port) as rebound:
        resolver = FakeResolver(["127.0.0.1"], ["127.0.0.2"])
        allow = (HOST, "127.0.0.1", "127.0.0.2")
        for _ in range(2):  # a second attempt resolves afresh: then it is 127.0.0.2's turn
            outcome = alert_delivery.send(_request(hook, allow), SETTINGS, resolve=resolver)
            assert outcome.accepted, outcome
        assert len(hook.all()) == 1 and len(rebound.all()) == 1
        assert [host for host, _ in resolver.lookups] == [HOST, HOST]  # once per attempt


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    ca = make_ca(tmp_path_factory.mktemp("webhook-pki"), "webhook-ca")
    return {
        "ca": ca.cert_path,
        "named": ca.issue("named", [HOST]),
        "other": ca.issue("other", ["other.example.test"]),
    }


def _server_tls(cert: object) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert.cert_path, cert.key_path)  # type: ignore[attr-defined]
    return context


def _post_pinned(url: str, ca: Path) -> httpx.Response:
    client_tls = ssl.create_default_context(cafile=str(ca))
    transport = PinnedTransport(HOST, "127.0.0.1", client_tls)
    with httpx.Client(transport=transport, trust_env=False, timeout=10) as client:
        return client.post(url, content=b"{}")


@pytest.mark.slow
def test_tls_to_the_pinned_address_verifies_and_names_the_host(pki: dict[str, object]) -> None:
    """Only the TCP connect goes to the address: SNI, the certificate check and the Host header
    use the URL's name."""
    with receiver(tls=_server_tls(pki["named"])) as hook:
        port = hook.url.rsplit(":", 1)[1]
        answer = _post_pinned(f"https://{HOST}:{port}/h", pki["ca"])  # type: ignore[arg-type]
        assert answer.status_code == 200
        (got,) = hook.all()
        assert got.headers["Host"] == f"{HOST}:{port}"
        assert hook.server_names == [HOST]


def test_tls_to_the_pinned_address_refuses_a_certificate_for_another_name(
    pki: dict[str, object],
) -> None:
    with receiver(tls=_server_tls(pki["other"])) as hook:
        port = hook.url.rsplit(":", 1)[1]
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            _post_pinned(f"https://{HOST}:{port}/h", pki["ca"])  # type: ignore[arg-type]
        assert hook.all() == []


def _private_attributes(module: object) -> list[str]:
    """``x._name`` where x is not ``self``: reaching into another library's internals."""
    tree = ast.parse(inspect.getsource(module))  # type: ignore[arg-type]
    return [
        f"{ast.unparse(node)} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]


def test_pinning_uses_only_public_extension_points_of_httpx() -> None:
    # The previous code replaced httpx.HTTPTransport's private ``_pool``: had a new httpx
    # renamed it, the swap would have set an unused attribute and pinning would be gone.
    assert _private_attributes(alert_delivery) == []
    assert _private_attributes(webhook_transport) == []
    assert isinstance(PinnedTransport(HOST, "127.0.0.1"), httpx.BaseTransport)
