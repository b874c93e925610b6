"""The control side of a lab proxy: what the lab hands out for a proxied link
(:class:`ProxyControl`, the methods an in-process :class:`~lagscope.lab.proxy.LatencyProxy` and
a proxy process share), :class:`ProxyClient` that speaks to a proxy process over its unix control
socket, and the checks both apply to a delay and a bandwidth before they reach a link. Apart from
the proxy itself so the lab (and a process that outlives the one that made the lab) can steer a
link without loading the proxy's event loop.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any, Protocol

from lagscope.errors import LagscopeError

_MIN_BANDWIDTH = 1024.0  # bytes/s: below this a slice would be a few bytes


class ProxyControl(Protocol):
    """What the lab hands out for a proxied link, in-process or over the control socket."""

    @property
    def listen_port(self) -> int: ...
    @property
    def delay_s(self) -> float: ...
    @property
    def paused(self) -> bool: ...
    @property
    def bandwidth_bps(self) -> float | None: ...
    def set_delay(self, one_way_s: float) -> None: ...
    def set_bandwidth(self, bytes_per_s: float | None) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def cut(self) -> None: ...


def _checked_delay(delay_s: float) -> float:
    delay = float(delay_s)
    if not 0.0 <= delay <= 3600.0:
        raise ValueError(f"one-way delay must be within 0…3600 s, not {delay_s!r}")
    return delay


def _checked_bandwidth(bytes_per_s: float | None) -> float | None:
    """``None`` or 0 mean unlimited; otherwise at least 1 KiB/s."""
    if bytes_per_s is None or float(bytes_per_s) == 0.0:
        return None
    bandwidth = float(bytes_per_s)
    if not _MIN_BANDWIDTH <= bandwidth <= 1e12:
        raise ValueError(
            f"bandwidth must be 0 (unlimited) or 1024…1e12 bytes/s, not {bytes_per_s!r}"
        )
    return bandwidth


class ProxyClient:
    """Controls a proxy process over its unix control socket; same methods as LatencyProxy."""

    def __init__(self, control_path: Path, listen_port: int, timeout_s: float = 5.0) -> None:
        self.control_path = control_path
        self._listen_port = listen_port
        self.timeout_s = timeout_s

    @property
    def listen_port(self) -> int:
        return self._listen_port

    @property
    def delay_s(self) -> float:
        return float(self.status()["delay_ms"]) / 1000

    @property
    def paused(self) -> bool:
        return bool(self.status()["paused"])

    @property
    def bandwidth_bps(self) -> float | None:
        value = self.status().get("bandwidth_bps")
        return None if value is None else float(value)

    def set_delay(self, one_way_s: float) -> None:
        self.command(f"delay {_checked_delay(one_way_s) * 1000:.3f}")

    def set_bandwidth(self, bytes_per_s: float | None) -> None:
        self.command(f"bandwidth {_checked_bandwidth(bytes_per_s) or 0:.0f}")

    def pause(self) -> None:
        self.command("pause")

    def resume(self) -> None:
        self.command("resume")

    def cut(self) -> None:
        self.command("cut")

    def status(self) -> dict[str, Any]:
        return self.command("status")

    def command(self, line: str) -> dict[str, Any]:
        """Send one command line; the proxy's JSON reply, or :class:`LagscopeError`."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(self.timeout_s)
                sock.connect(str(self.control_path))
                sock.sendall(line.encode() + b"\n")
                with sock.makefile("rb") as replies:
                    raw = replies.readline()
        except OSError as exc:
            raise LagscopeError(f"proxy control {self.control_path}: {exc}") from exc
        reply: dict[str, Any] = json.loads(raw) if raw else {"ok": False, "error": "no reply"}
        if not reply.get("ok"):
            raise LagscopeError(f"proxy refused {line!r}: {reply.get('error')}")
        return reply
