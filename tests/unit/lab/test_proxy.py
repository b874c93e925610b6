"""The latency proxy against a plain asyncio echo server: delay, order, pause, resume, cut, and
the subprocess form driven through its control socket."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lagscope.errors import LagscopeError
from lagscope.lab.proxy import LatencyProxy
from lagscope.lab.proxy_control import ProxyClient

# Real sockets with real delays (0.1–0.5 s a test): the full run's, not the inner loop's.
pytestmark = pytest.mark.slow


class EchoServer:
    """An asyncio echo server in its own thread, on a free loopback port."""

    def __init__(self) -> None:
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    async def _echo(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._echo, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    def __enter__(self) -> EchoServer:
        self._thread.start()
        assert self._ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(5)


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    with EchoServer() as server:
        yield server


@pytest.fixture
def proxy(echo: EchoServer) -> Iterator[LatencyProxy]:
    started = LatencyProxy("127.0.0.1", echo.port).start()
    try:
        yield started
    finally:
        started.stop()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def round_trip(sock: socket.socket, payload: bytes = b"ping") -> float:
    began = time.monotonic()
    sock.sendall(payload)
    assert recv_exactly(sock, len(payload)) == payload
    return time.monotonic() - began


def test_passes_bytes_through_without_delay(proxy: LatencyProxy) -> None:
    with connect(proxy.listen_port) as sock:
        assert round_trip(sock, b"x" * 200_000) < 2.0


def test_delay_is_added_in_each_direction(proxy: LatencyProxy) -> None:
    proxy.set_delay(0.1)
    assert proxy.delay_s == 0.1
    with connect(proxy.listen_port) as sock:
        rtt = round_trip(sock)
    # One-way 100 ms: a round trip crosses the proxy twice. The upper bound only guards against
    # delays piling up; the box is shared, so it is loose.
    assert 0.2 <= rtt < 1.0


def test_new_delay_applies_to_new_chunks(proxy: LatencyProxy) -> None:
    # Bounds 0.5 s apart, so a busy box cannot blur them.
    with connect(proxy.listen_port) as sock:
        assert round_trip(sock) < 0.5
        proxy.set_delay(0.25)
        assert round_trip(sock) >= 0.5
        proxy.set_delay(0.0)
        assert round_trip(sock) < 0.5


def test_order_is_kept_under_delay(proxy: LatencyProxy) -> None:
    proxy.set_delay(0.02)
    chunks = [f"{i:04d};".encode() for i in range(300)]
    with connect(proxy.listen_port) as sock:
        for chunk in chunks:
            sock.sendall(chunk)
        assert recv_exactly(sock, sum(map(len, chunks))) == b"".join(chunks)


def test_connections_are_delayed_independently(proxy: LatencyProxy) -> None:
    proxy.set_delay(0.3)
    with connect(proxy.listen_port) as first, connect(proxy.listen_port) as second:
        began = time.monotonic()
        first.sendall(b"one")
        second.sendall(b"two")
        assert recv_exactly(first, 3) == b"one"
        assert recv_exactly(second, 3) == b"two"
        # Serialised links would need 4 × 0.3 s; concurrent ones about 2 × 0.3 s.
        assert time.monotonic() - began < 1.1


def test_pause_stalls_and_resume_delivers(proxy: LatencyProxy) -> None:
    with connect(proxy.listen_port) as sock:
        assert round_trip(sock) < 2.0
        proxy.pause()
        assert proxy.paused
        sock.sendall(b"queued")
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(16)
        proxy.resume()
        sock.settimeout(5)
        assert recv_exactly(sock, 6) == b"queued"


def test_cut_drops_open_connections_but_accepts_new_ones(proxy: LatencyProxy) -> None:
    with connect(proxy.listen_port) as old:
        assert round_trip(old) < 2.0
        proxy.cut()
        with contextlib.suppress(ConnectionResetError):
            assert old.recv(16) == b""
    with connect(proxy.listen_port) as new:
        assert round_trip(new) < 2.0


def test_target_down_drops_the_client(echo: EchoServer) -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        dead_port = placeholder.getsockname()[1]
    started = LatencyProxy("127.0.0.1", dead_port).start()
    try:
        with connect(started.listen_port) as sock, contextlib.suppress(ConnectionResetError):
            assert sock.recv(16) == b""
    finally:
        started.stop()


def test_rejects_a_negative_delay(proxy: LatencyProxy) -> None:
    with pytest.raises(ValueError):
        proxy.set_delay(-1)


def test_subprocess_form_obeys_its_control_socket(echo: EchoServer, tmp_path: Path) -> None:
    control = tmp_path / "proxy.sock"
    argv = [sys.executable, "-m", "lagscope.lab.proxy", "--target-port", str(echo.port)]
    proc = subprocess.Popen([*argv, "--delay-ms", "30", "--control", str(control)])
    try:
        client = ProxyClient(control, listen_port=0)
        deadline = time.monotonic() + 10
        while not control.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "proxy did not start"
            time.sleep(0.02)
        status = client.status()
        assert status["delay_ms"] == 30 and status["paused"] is False
        with connect(int(status["listen_port"])) as sock:
            assert round_trip(sock) >= 0.06
            client.set_delay(0)
            assert client.delay_s == 0
            client.pause()
            assert client.paused
            sock.sendall(b"later")
            sock.settimeout(0.3)
            with pytest.raises(TimeoutError):
                sock.recv(16)
            client.resume()
            sock.settimeout(5)
            assert recv_exactly(sock, 5) == b"later"
            client.cut()
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(16) == b""
        with pytest.raises(LagscopeError):
            client.command("explode")
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
    assert not control.exists()


def stream_through(sock: socket.socket, total: int, seconds_cap: float = 20.0) -> float:
    """Send ``total`` bytes while reading the echo; the seconds until all came back."""
    payload = b"b" * total
    received = 0
    began = time.monotonic()
    sender = threading.Thread(target=sock.sendall, args=(payload,), daemon=True)
    sender.start()
    sock.settimeout(seconds_cap)
    while received < total:
        chunk = sock.recv(65536)
        assert chunk, "link closed early"
        received += len(chunk)
    sender.join(5)
    return time.monotonic() - began


def test_bandwidth_limit_holds_and_can_be_lifted(proxy: LatencyProxy) -> None:
    rate = 200_000.0
    proxy.set_bandwidth(rate)
    assert proxy.bandwidth_bps == rate
    total = 300_000
    with connect(proxy.listen_port) as sock:
        elapsed = stream_through(sock, total)
        # Both directions are capped at `rate` and pipelined: the echo arrives at about `rate`.
        # Never faster than the cap allows (minus one 50 ms slice of burst); a loaded box may be
        # slower, hence the loose upper bound.
        assert elapsed >= total / rate - 0.1
        assert elapsed < 3 * total / rate
        proxy.set_bandwidth(None)
        assert proxy.bandwidth_bps is None
        # Lifted: ten times as much in well under what the cap would have needed.
        assert stream_through(sock, 10 * total) < 10 * total / rate / 3


def test_bandwidth_is_shared_by_the_links_connections(proxy: LatencyProxy) -> None:
    rate = 200_000.0
    proxy.set_bandwidth(rate)
    results: list[float] = []
    with connect(proxy.listen_port) as first, connect(proxy.listen_port) as second:
        threads = [
            threading.Thread(target=lambda s=s: results.append(stream_through(s, 150_000)))
            for s in (first, second)
        ]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        assert len(results) == 2
        assert time.monotonic() - began >= 300_000 / rate - 0.1


def test_rejects_a_tiny_bandwidth(proxy: LatencyProxy) -> None:
    with pytest.raises(ValueError):
        proxy.set_bandwidth(10)
    proxy.set_bandwidth(0)  # 0 means unlimited, as on the control socket
    assert proxy.bandwidth_bps is None


def test_subprocess_form_sets_bandwidth(echo: EchoServer, tmp_path: Path) -> None:
    control = tmp_path / "proxy.sock"
    argv = [sys.executable, "-m", "lagscope.lab.proxy", "--target-port", str(echo.port)]
    proc = subprocess.Popen([*argv, "--bandwidth", "100000", "--control", str(control)])
    try:
        client = ProxyClient(control, listen_port=0)
        deadline = time.monotonic() + 10
        while not control.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "proxy did not start"
            time.sleep(0.02)
        assert client.bandwidth_bps == 100_000
        with connect(int(client.status()["listen_port"])) as sock:
            assert stream_through(sock, 100_000) >= 0.9
            client.set_bandwidth(None)
            assert client.bandwidth_bps is None
            assert stream_through(sock, 1_000_000) < 3.0
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
