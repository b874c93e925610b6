"""The interactive API docs, served with Swagger UI's assets from this process.

FastAPI's default page loads Swagger UI from a CDN, which many Lagscope hosts cannot reach; the
``swagger-ui-bundle`` package ships the same files, mounted here under the docs' own path.
``GET /`` is the web UI (api/webui.py), or a redirect here when no UI build exists.

Swagger UI starts from one inline script; the page's Content-Security-Policy names that
script's SHA-256, so it runs and no other inline script (an injected one) does.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from lagscope.api.middleware import content_security_policy

DOCS_URL = "/api/v1/docs"
ASSETS_URL = f"{DOCS_URL}/assets"


def install(app: FastAPI) -> None:
    app.mount(ASSETS_URL, StaticFiles(directory=swagger_ui_path), name="swagger-ui-assets")
    openapi_url = app.openapi_url or "/api/v1/openapi.json"

    page = get_swagger_ui_html(
        openapi_url=openapi_url,
        title="Lagscope API",
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_URL}/favicon-32x32.png",
    ).body
    csp = content_security_policy(*_inline_script_hashes(bytes(page).decode()))

    @app.get(DOCS_URL, include_in_schema=False)
    def api_docs() -> HTMLResponse:
        return HTMLResponse(page, headers={"Content-Security-Policy": csp})


def _inline_script_hashes(html: str) -> list[str]:
    """CSP source expressions for each inline ``<script>``: the hash of its exact text."""
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    return [
        "sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in scripts
    ]
