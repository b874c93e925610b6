"""The fixtures most integration modules share: ``api`` (a real API server) and ``pipeline``
(worker, beat and heartbeat over the lab), one of each per module.

A module changes what it gets by overriding the small fixture the big one reads (pytest's
fixture override by name), not by writing its own server start:

    @pytest.fixture(scope="module")
    def api_settings() -> dict[str, object]:
        return {"stream_recheck_s": 0.5}          # Settings overrides for this module's API

    @pytest.fixture(scope="module")
    def api_store(pipeline: Pipeline) -> str:
        return pipeline.url                       # serve the pipeline's store, not a fresh one

    @pytest.fixture(scope="module")
    def pipeline_options() -> dict[str, object]:
        return {"params_every_s": 1.0}            # keyword arguments of start_pipeline

A module with a fixture of its own named ``api`` or ``pipeline`` keeps it (it wins over these).
``postgres`` is a throwaway PostgreSQL server (postgres.py) for the module that asks for it.
The lab itself is session-wide, in tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .api_stack import ApiServer, api_server, sqlite_url
from .pipeline_stack import Pipeline, start_pipeline
from .postgres import ThrowawayPostgres, start_postgres


def _module_name(request: pytest.FixtureRequest) -> str:
    return request.module.__name__.rpartition(".")[2].removeprefix("test_")


@pytest.fixture(scope="module")
def api_settings() -> dict[str, Any]:
    """Settings overrides (keyword arguments of ``api_server``) for this module's ``api``."""
    return {}


@pytest.fixture(scope="module")
def api_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The store this module's ``api`` serves: a fresh SQLite file (``api_server`` migrates it)."""
    return sqlite_url(tmp_path_factory.mktemp(_module_name(request)))


@pytest.fixture(scope="module")
def api(api_store: str, api_settings: dict[str, Any]) -> Iterator[ApiServer]:
    """A real API server (uvicorn on a free loopback port) for the module, stopped after it."""
    with api_server(api_store, **api_settings) as server:
        yield server


@pytest.fixture(scope="module")
def pipeline_options() -> dict[str, Any]:
    """Keyword arguments of ``start_pipeline`` for this module's ``pipeline``."""
    return {}


@pytest.fixture(scope="module")
def pipeline(
    lab,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    pipeline_options: dict[str, Any],
) -> Iterator[Pipeline]:
    """Worker, beat and heartbeat writer polling the lab into a fresh store, for the module."""
    workdir = tmp_path_factory.mktemp(f"{_module_name(request)}-pipeline")
    with start_pipeline(lab, workdir, **pipeline_options) as started:
        yield started


@pytest.fixture(scope="module")
def postgres() -> Iterator[ThrowawayPostgres]:
    """A throwaway PostgreSQL server for the module, stopped (and removed) at its end."""
    server = start_postgres()
    try:
        yield server
    finally:
        server.stop()
