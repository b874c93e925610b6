"""A real API server for tests: uvicorn in a thread on a free port, over a migrated store.

Tests talk to it with httpx over real HTTP (Starlette's TestClient is not used: it skips the
server and is deprecated with httpx in this Starlette).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn
from sqlalchemy.orm import Session, sessionmaker

from lagscope.api.app import create_app
from lagscope.api.serve import server_config
from lagscope.config import PLACEHOLDER_SECRET, Settings
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import free_port
from lagscope.security.demo_store import mark_demo_store
from lagscope.store_setup import upgrade

ADMIN = ("admin", "admin-password-1")
SECRET = "api-test-secret-5f0c3a9e71d24b68-Xw"


@dataclass
class ApiServer:
    url: str
    sessions: sessionmaker[Session]
    settings: Settings
    admin_token: str

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.admin_token}"} if token != "" else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@contextmanager
def api_server(
    store_url: str,
    demo: bool = False,
    secret_key: str = SECRET,
    port: int | None = None,
    **overrides: object,
) -> Iterator[ApiServer]:
    """``port``: one picked beforehand (a URL the test gave elsewhere first); else a free one."""
    upgrade(store_url)
    settings = Settings(
        database_url=store_url,
        secret_key=PLACEHOLDER_SECRET if demo else secret_key,
        demo=demo,
        admin_username=ADMIN[0],
        admin_password=ADMIN[1],
        **overrides,  # type: ignore[arg-type]
    )
    engine = make_engine(store_url)
    sessions = make_session_factory(engine)
    if demo:  # demo mode runs only on a store the demo made
        with sessions() as session, session.begin():
            mark_demo_store(session)
    app = create_app(settings, sessions)
    port = port or free_port()
    server = uvicorn.Server(
        server_config(app, settings, "127.0.0.1", port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the API server did not start")
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=url) as c:
            token = c.post("/api/v1/auth/login", json={"username": ADMIN[0], "password": ADMIN[1]})
            token.raise_for_status()
        yield ApiServer(url, sessions, settings, token.json()["token"])
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        if app.state.raw_series is not None:  # closed by the lifespan, which is off here
            app.state.raw_series.close()
        engine.dispose()


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'store.db'}"
