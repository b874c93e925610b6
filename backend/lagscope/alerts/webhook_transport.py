"""DNS pinning for webhook requests, through public extension points of httpx and httpcore only.

A webhook's host is resolved once per attempt (:func:`pin`); that address is checked against the
destination allow-list and is the only one connected to. :class:`PinnedTransport` is an
``httpx.BaseTransport`` (httpx's documented way to replace the network layer) over an
``httpcore.ConnectionPool`` given a ``network_backend`` (httpcore's documented hook) that
connects to the checked address, whatever the name resolves to by then (DNS rebinding). TLS
still sends SNI for, and verifies the certificate against, the URL's host name, and the Host
header carries the name: only the TCP connect goes to the address.

No private attribute of httpx or httpcore is touched, so a new httpx version cannot silently
drop the pinning (the previous code swapped ``HTTPTransport._pool``: had httpx renamed it, the
swap would have set an unused attribute and requests would have gone to whatever the system
resolver said).
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpcore
import httpx

from lagscope.alerts.delivery_policy import WebhookUrlError, address_allowed

# host, port -> the addresses the name has now (the system resolver unless a test passes one).
Resolver = Callable[[str, int], list[str]]


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def pin(url: str, allow: Iterable[str], resolve: Resolver) -> tuple[str, str]:
    """Resolve the URL's host once and check the address; returns (host, address)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = [host] if _is_ip(host) else resolve(host, port)
    except OSError as exc:
        raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from exc
    if not addresses:
        raise httpx.ConnectError(f"{host} has no address")
    address = addresses[0]
    if not address_allowed(host, address, list(allow)):
        raise WebhookUrlError(
            f"{host} resolves to {address}, an internal address not on the webhook destination "
            "allow-list (LAGSCOPE_WEBHOOK_ALLOWED_HOSTS)"
        )
    return host, address


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class PinnedBackend(httpcore.NetworkBackend):
    """Connects to the one address checked for this attempt; refuses any other host."""

    def __init__(self, host: str, address: str) -> None:
        self._host, self._address = host.lower(), address
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if host.lower() != self._host:
            raise httpcore.ConnectError(f"not the pinned host: {host}")
        return self._inner.connect_tcp(self._address, port, timeout, local_address, socket_options)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks do not use unix sockets")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# httpcore's public exceptions -> httpx's (most specific first), so callers catch httpx.HTTPError.
_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for theirs, ours in _ERRORS:
            if isinstance(exc, theirs):
                raise ours(str(exc)) from exc
        raise


class _Body(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class PinnedTransport(httpx.BaseTransport):
    """An httpx transport whose every connection goes to ``address`` for ``host``."""

    def __init__(self, host: str, address: str, ssl_context: ssl.SSLContext | None = None) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context or ssl.create_default_context(),
            network_backend=PinnedBackend(host, address),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            answer = self._pool.handle_request(core)
        assert isinstance(answer.stream, Iterable)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self._pool.close()
