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
import signal
from pathlib import Path

from lagscope.lab.proxy.latency import LatencyProxy

__all__ = ["LatencyProxy", "main", "parse_args"]


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
