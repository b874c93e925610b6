"""The uvicorn server every Lagscope API runs in (``lagscope api`` and ``lagscope demo``).

Forwarded headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are believed only from the
addresses in ``LAGSCOPE_TRUSTED_PROXIES``; with none (the default) they are ignored. uvicorn's
own default trusts them from 127.0.0.1, so any process on the API's machine, or any proxy there
that passes the header on unchanged, could give a request whatever client address it liked —
and the client address is what login throttling and demo mode's loopback check go by.
"""

from __future__ import annotations

from typing import Any

import uvicorn

from lagscope.config import Settings


def server_config(
    app: Any, settings: Settings, host: str, port: int, **options: Any
) -> uvicorn.Config:
    proxies = settings.trusted_proxy_list()
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        proxy_headers=bool(proxies),
        # Never None: uvicorn would then read FORWARDED_ALLOW_IPS, or trust 127.0.0.1.
        forwarded_allow_ips=proxies or "",
        server_header=False,  # "server: uvicorn" tells an attacker what to look up
        **options,
    )
