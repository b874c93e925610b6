"""A TCP proxy that adds latency, limits bandwidth, stalls or cuts a link: the lab's stand-in for
a far network.

Each chunk read in either direction is stamped on arrival and written ``delay_s`` later (one way,
so a round trip grows by twice that), in order per direction, without holding up other
connections. ``set_bandwidth(bytes_per_s)`` caps what the link delivers in each direction (all
its connections share the cap, as they would share a thin WAN link); ``None`` lifts it.
``pause()`` stops delivery both ways (bytes queue up, the link looks dead, as a partitioned
network does) until ``resume()``; ``cut()`` drops every open connection at once, as a
firewall reset would, while new connections are still accepted.

Two ways to run it:

* in-process: ``LatencyProxy(host, port, delay_s).start()`` runs its own event loop in a daemon
  thread; the control methods are thread-safe.
* as a process: ``python -m lagscope.lab.proxy --listen-port N --target-port M --delay-ms D
  --control PATH`` answers one-line commands on a unix socket (``delay <ms>``,
  ``bandwidth <bytes/s>`` with 0 for unlimited, ``pause``, ``resume``, ``cut``, ``status``; each
  reply is one JSON line). :class:`~lagscope.lab.proxy_control.ProxyClient` speaks it with the
  same methods as :class:`LatencyProxy`, so the lab can outlive the process that made it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lagscope.errors import LagscopeError
from lagscope.lab.proxy_control import _checked_bandwidth, _checked_delay

_CHUNK = 65536
# Per direction, 256 chunks (≤ 16 MiB) may wait; beyond that the proxy stops reading and TCP
# flow control pushes back on the sender, as a slow real link would.
_QUEUE_CHUNKS = 256
_EOF = b""
# A limited link delivers in slices of at most this many seconds' worth of bytes, so throughput
# is smooth at 50 ms resolution and a lifted or changed limit takes effect within one slice.
_SLICE_S = 0.05


class _Pacer:
    """Paces one direction of a link to ``rate`` bytes/s: a virtual clock of when the link is
    next free. Only touched from the proxy's event loop."""

    def __init__(self) -> None:
        self.rate: float | None = None
        self._free_at = 0.0

    def set_rate(self, rate: float | None) -> None:
        self.rate = rate
        self._free_at = 0.0  # a new limit starts from an idle link, not the old one's debt

    def slice_size(self) -> int:
        return _CHUNK if self.rate is None else max(1, int(self.rate * _SLICE_S))

    async def take(self, size: int) -> None:
        """Wait until ``size`` bytes may go out at the current rate."""
        rate = self.rate
        if rate is None:
            return
        loop = asyncio.get_running_loop()
        start = max(loop.time(), self._free_at)
        self._free_at = start + size / rate
        # Send at the end of the slice's time, so the bytes delivered by any instant never
        # exceed rate × elapsed.
        await asyncio.sleep(max(0.0, self._free_at - loop.time()))


class LatencyProxy:
    """Forward ``listen_host:listen_port`` (0 = any free port) to ``target_host:target_port``."""

    def __init__(
        self,
        target_host: str,
        target_port: int,
        delay_s: float = 0.0,
        *,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        bandwidth_bps: float | None = None,
    ) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.listen_host = listen_host
        self._listen_port = listen_port
        self._delay_s = _checked_delay(delay_s)
        self._paused = False
        self._bandwidth = _checked_bandwidth(bandwidth_bps)
        # One pacer per direction for the whole link: connections share the cap.
        self._upstream = _Pacer()
        self._downstream = _Pacer()
        for pacer in (self._upstream, self._downstream):
            pacer.set_rate(self._bandwidth)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._flowing: asyncio.Event | None = None
        self._stopping: asyncio.Event | None = None
        self._links: dict[asyncio.Task[None], tuple[asyncio.StreamWriter, ...]] = {}
        self._thread: threading.Thread | None = None

    # ---- control (thread-safe) ------------------------------------------------------------------

    @property
    def listen_port(self) -> int:
        return self._listen_port

    @property
    def delay_s(self) -> float:
        return self._delay_s

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def bandwidth_bps(self) -> float | None:
        return self._bandwidth

    @property
    def connections(self) -> int:
        return len(self._links)

    def set_delay(self, one_way_s: float) -> None:
        """Applies to chunks read from now on; queued chunks keep their delivery time."""
        self._delay_s = _checked_delay(one_way_s)

    def set_bandwidth(self, bytes_per_s: float | None) -> None:
        """Cap each direction at ``bytes_per_s`` (``None`` or 0: unlimited), from the next slice."""
        bandwidth = _checked_bandwidth(bytes_per_s)

        def apply() -> None:
            self._bandwidth = bandwidth
            for pacer in (self._upstream, self._downstream):
                pacer.set_rate(bandwidth)

        self._in_loop(apply)

    def pause(self) -> None:
        self._in_loop(self._pause_now)

    def resume(self) -> None:
        self._in_loop(self._resume_now)

    def cut(self) -> None:
        self._in_loop(self._cut_now)

    def status(self) -> dict[str, Any]:
        return {
            "listen_port": self._listen_port,
            "target": f"{self.target_host}:{self.target_port}",
            "delay_ms": round(self._delay_s * 1000, 3),
            "bandwidth_bps": self._bandwidth,
            "paused": self._paused,
            "connections": self.connections,
        }

    # ---- in-process form ------------------------------------------------------------------------

    def start(self, timeout_s: float = 10.0) -> LatencyProxy:
        """Run in a daemon thread; return once listening (``listen_port`` is then known)."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(self.serve(on_listening=ready.set))
            except BaseException as exc:
                failure.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name=f"latency-proxy-{self.target_port}")
        self._thread.daemon = True
        self._thread.start()
        if not ready.wait(timeout_s):
            raise LagscopeError(f"latency proxy not listening after {timeout_s} s")
        if failure:
            raise LagscopeError(f"latency proxy failed to start: {failure[0]}") from failure[0]
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between: already stopped
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    # ---- the event loop side --------------------------------------------------------------------

    async def serve(
        self,
        on_listening: Callable[[], None] | None = None,
        control_path: Path | None = None,
    ) -> None:
        """Listen (and optionally answer on ``control_path``) until :meth:`stop` or a signal."""
        self._loop = asyncio.get_running_loop()
        self._flowing = asyncio.Event()
        self._stopping = asyncio.Event()
        if not self._paused:
            self._flowing.set()
        self._server = await asyncio.start_server(
            self._handle, self.listen_host, self._listen_port, reuse_address=True
        )
        self._listen_port = int(self._server.sockets[0].getsockname()[1])
        control = None
        try:
            if control_path is not None:
                control_path.unlink(missing_ok=True)
                control = await asyncio.start_unix_server(self._control, str(control_path))
            if on_listening is not None:
                on_listening()
            await self._stopping.wait()
        finally:
            for server in (self._server, control):
                if server is not None:
                    server.close()
            self._cut_now()
            await asyncio.gather(*list(self._links), return_exceptions=True)
            for server in (self._server, control):
                if server is not None:
                    await server.wait_closed()
            if control_path is not None:
                control_path.unlink(missing_ok=True)

    def request_stop(self) -> None:
        """From inside the loop (a signal handler): stop serving."""
        if self._stopping is not None:
            self._stopping.set()

    def _in_loop(self, action: Callable[[], None]) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():  # not serving yet: only the flag matters
            action()
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            action()
            return

        async def call() -> None:
            action()

        # Wait for it, so that when pause() returns nothing more is delivered.
        asyncio.run_coroutine_threadsafe(call(), loop).result(timeout=10)

    def _pause_now(self) -> None:
        self._paused = True
        if self._flowing is not None:
            self._flowing.clear()

    def _resume_now(self) -> None:
        self._paused = False
        if self._flowing is not None:
            self._flowing.set()

    def _cut_now(self) -> None:
        for task, writers in list(self._links.items()):
            for writer in writers:
                writer.transport.abort()  # RST, not FIN: the peer sees the link die
            task.cancel()

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._links[task] = (client_w,)
        clean = False
        try:
            upstream_r, upstream_w = await asyncio.open_connection(
                self.target_host, self.target_port
            )
            self._links[task] = (client_w, upstream_w)
            async with asyncio.TaskGroup() as group:
                group.create_task(self._direction(client_r, upstream_w, self._upstream))
                group.create_task(self._direction(upstream_r, client_w, self._downstream))
            clean = True
        except* OSError:
            pass  # target down, or a peer reset: drop the link as the network would
        finally:
            for writer in self._links.pop(task, ()):
                # Both directions ended with EOF: close, so queued bytes still go out; otherwise
                # (cut, reset, cancelled) abort, which sends RST.
                if clean:
                    writer.close()
                else:
                    writer.transport.abort()

    async def _direction(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pacer: _Pacer
    ) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(maxsize=_QUEUE_CHUNKS)
        loop = asyncio.get_running_loop()
        # Bytes read but not yet delivered. Under a bandwidth limit the proxy holds no more than
        # the link's bandwidth × delay (what a real link has in flight) plus a little, so the
        # sender feels the thin link through TCP flow control at once, as it would on a WAN,
        # instead of filling megabytes of proxy queue first.
        queued = 0
        room = asyncio.Event()
        room.set()

        def limit() -> float | None:
            rate = pacer.rate
            return None if rate is None else rate * (self._delay_s + _SLICE_S * 2) + _CHUNK

        async def read_side() -> None:
            nonlocal queued
            while True:
                data = await reader.read(_CHUNK)
                queued += len(data)
                await queue.put((loop.time() + self._delay_s, data))
                if data == _EOF:
                    return
                bound = limit()
                if bound is not None and queued > bound:
                    room.clear()
                    await room.wait()

        async def write_side() -> None:
            nonlocal queued
            assert self._flowing is not None
            while True:
                due, data = await queue.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                await self._flowing.wait()
                if data == _EOF:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                view = memoryview(data)
                while view:
                    size = pacer.slice_size()
                    piece, view = view[:size], view[size:]
                    await pacer.take(len(piece))
                    # Paused while waiting for the link: hold the rest as well.
                    await self._flowing.wait()
                    writer.write(piece)
                    await writer.drain()
                    queued -= len(piece)
                    bound = limit()
                    if bound is None or queued <= bound:
                        room.set()

        async with asyncio.TaskGroup() as group:
            group.create_task(read_side())
            group.create_task(write_side())

    async def _control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(json.dumps(self._command(line.decode().strip())).encode() + b"\n")
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    def _command(self, line: str) -> dict[str, Any]:
        verb, _, arg = line.partition(" ")
        actions: dict[str, Callable[[], None]] = {
            "pause": self._pause_now,
            "resume": self._resume_now,
            "cut": self._cut_now,
            "status": lambda: None,
        }
        try:
            if verb == "delay":
                self.set_delay(float(arg) / 1000)
            elif verb == "bandwidth":
                self.set_bandwidth(float(arg))
            elif verb in actions:
                actions[verb]()
            else:
                return {"ok": False, "error": f"unknown command {line!r}"}
        except ValueError as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": True, **self.status()}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The process's options (the docker-compose lab's far link checks its command with it)."""
    parser = argparse.ArgumentParser(prog="python -m lagscope.lab.proxy", description=__doc__)
    parser.add_argument("--listen-host", default="127.0.0.1")
    parser.add_argument("--listen-port", type=int, default=0)
    parser.add_argument("--target-host", default="127.0.0.1")
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument(
        "--bandwidth", type=float, default=0.0, help="bytes/s per direction (0: unlimited)"
    )
    parser.add_argument("--control", type=Path, required=True, help="unix socket for commands")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    proxy = LatencyProxy(
        args.target_host,
        args.target_port,
        args.delay_ms / 1000,
        listen_host=args.listen_host,
        listen_port=args.listen_port,
        bandwidth_bps=args.bandwidth,
    )
    asyncio.run(_serve_until_signalled(proxy, args.control))


async def _serve_until_signalled(proxy: LatencyProxy, control: Path) -> None:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, proxy.request_stop)
    await proxy.serve(control_path=control)


if __name__ == "__main__":
    main()
