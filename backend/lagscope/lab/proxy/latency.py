"""The latency proxy itself: it listens, forwards each connection both ways through the link's
pacing (lab/proxy/link.py), and takes commands — delay, bandwidth, pause, resume, cut — from its
caller's thread or, as a process, from a unix socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lagscope.errors import LagscopeError
from lagscope.lab.proxy.link import Pacer, forward
from lagscope.lab.proxy_control import _checked_bandwidth, _checked_delay


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
        self._upstream = Pacer()
        self._downstream = Pacer()
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
                group.create_task(self._forward(client_r, upstream_w, self._upstream))
                group.create_task(self._forward(upstream_r, client_w, self._downstream))
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

    async def _forward(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pacer: Pacer
    ) -> None:
        assert self._flowing is not None
        await forward(reader, writer, pacer, lambda: self._delay_s, self._flowing)

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
