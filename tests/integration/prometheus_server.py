"""Debian's Prometheus started on a free loopback port for a test, with its own data directory
and log; stopped on the way out."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from lagscope.demo.processes import free_port

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


@contextmanager
def prometheus_server(directory: Path, config: str, *flags: str) -> Iterator[str]:
    """Prometheus on ``config`` (YAML text) with ``flags`` added; yields its base URL."""
    config_file = directory / "prometheus.yml"
    config_file.write_text(config)
    port = free_port()
    log = (directory / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config_file}",
            f"--storage.tsdb.path={directory / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            *flags,
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
        log.close()


def query(prometheus: str, expr: str) -> list[dict[str, Any]]:
    """An instant query's result; [] while Prometheus is not answering yet."""
    try:
        answer = httpx.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=5)
    except httpx.TransportError:
        return []
    if answer.status_code != 200:
        return []
    return list(answer.json()["data"]["result"])
