"""A real HTTP webhook receiver on loopback for the alert tests: records every request (headers,
raw body) and answers from a script of status codes (then 200), like a flaky real receiver."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str
    script: list[int] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server_names: list[str | None] = field(default_factory=list)
    # Set: the next request is recorded on arrival and answered only once this is released
    # (a receiver still working when its sender dies).
    holding: threading.Event | None = None

    def hold_next(self) -> threading.Event:
        release = threading.Event()
        with self.lock:
            self.holding = release
        return release

    def fail_next(self, *statuses: int) -> None:
        with self.lock:
            self.script.extend(statuses)

    def accepted(self) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if 200 <= r.status < 300]

    def all(self) -> list[Received]:
        with self.lock:
            return list(self.requests)

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()
            self.script.clear()


@contextmanager
def receiver(
    address: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
) -> Iterator[Receiver]:
    """Listens on ``address`` (loopback) and ``port`` (0: a free one); with ``tls``, HTTPS and
    the names the clients asked for (SNI) in ``server_names``."""
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with state.lock:
                status = state.script.pop(0) if state.script else 200
                state.requests.append(Received(self.path, dict(self.headers), body, status))
                held, state.holding = state.holding, None
            if held is not None:
                held.wait(timeout=60)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer((address, port), Handler)
    scheme = "http"
    if tls is not None:

        def remember(sock: ssl.SSLObject, name: str | None, context: ssl.SSLContext) -> None:
            with state.lock:
                state.server_names.append(name)

        tls.sni_callback = remember
        server.socket = tls.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    state.url = f"{scheme}://{address}:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
