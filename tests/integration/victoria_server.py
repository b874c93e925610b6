"""Debian's VictoriaMetrics single node started on a free loopback port for a test, with its own
data directory and log; stopped on the way out."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from lagscope.demo.processes import free_port

from .waiting import wait_until

VICTORIA_METRICS = shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics"


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def victoria_server(directory: Path) -> Iterator[str]:
    """A single node keeping its data under ``directory``; yields its base URL once healthy."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = (directory / "victoria-metrics.log").open("wb")
    process = subprocess.Popen(
        [
            VICTORIA_METRICS,
            f"-storageDataPath={directory / 'data'}",
            f"-httpListenAddr=127.0.0.1:{port}",
            # Samples sent again after a timeout the store had in fact taken are kept once.
            "-dedup.minScrapeInterval=1ms",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: process.poll() is not None or _healthy(url),
            timeout_s=30,
            message="VictoriaMetrics answers /health",
        )
        assert process.poll() is None, (directory / "victoria-metrics.log").read_text()[-2000:]
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
        log.close()
