"""The web UI served by the API process: the build at ``/`` with an SPA fallback that never
shadows the API, ``/metrics`` or ``/healthz``, cached assets, and a strict CSP on the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from .api_stack import ApiServer

pytestmark = pytest.mark.integration

INDEX = '<!doctype html><div id="root"></div><script src="/assets/app-1a2b.js"></script>'


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ui-dist")
    (root / "assets").mkdir()
    (root / "index.html").write_text(INDEX)
    (root / "assets" / "app-1a2b.js").write_text("console.log('ui')")
    (root / "robots.txt").write_text("User-agent: *\n")
    (root.parent / "secret.txt").write_text("outside the build")
    return root


@pytest.fixture(scope="module")
def api_settings(dist: Path) -> dict[str, object]:
    return {"ui_dist": str(dist)}


PAGES = ["/", "/clusters/3?range=6h&source=heartbeat", "/settings/servers"]


@pytest.mark.parametrize("path", PAGES)
def test_pages_are_the_ui(api: ApiServer, path: str):
    with api.client("") as anonymous:
        page = anonymous.get(path)
    assert page.status_code == 200
    assert page.text == INDEX
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["cache-control"] == "no-cache"
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp


def test_assets_are_cached_and_files_served(api: ApiServer):
    with api.client("") as anonymous:
        asset = anonymous.get("/assets/app-1a2b.js")
        assert asset.status_code == 200 and "console.log" in asset.text
        assert "immutable" in asset.headers["cache-control"]
        assert anonymous.get("/robots.txt").text.startswith("User-agent")
        assert anonymous.get("/assets/missing.js").status_code == 404


def test_the_fallback_never_shadows_the_api(api: ApiServer):
    with api.client("") as anonymous:
        unknown = anonymous.get("/api/v1/no-such-thing")
        assert unknown.status_code == 404
        assert unknown.headers["content-type"].startswith("application/problem+json")
        assert anonymous.get("/api/v1/clusters").status_code == 401
        assert anonymous.get("/api").status_code == 404
        assert anonymous.get("/metrics").status_code == 401
        assert anonymous.get("/healthz").json() == {"status": "ok"}
        assert anonymous.get("/api/v1/docs").status_code == 200
    with api.client() as admin:
        assert admin.get("/api/v1/clusters").json() == []


def test_no_file_outside_the_build(api: ApiServer):
    with api.client("") as anonymous:
        for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/assets/..%2f..%2fsecret.txt"):
            answer = anonymous.get(path)
            assert "outside the build" not in answer.text, path


UI_RESPONSES = ["/", "/index.html", "/robots.txt", "/assets/app-1a2b.js", "/api/v1/docs"]


@pytest.mark.parametrize("path", UI_RESPONSES)
def test_every_ui_response_carries_the_csp(api: ApiServer, path: str):
    """Not only the SPA fallback; /index.html and the docs page too, and
    never framed (clickjacking)."""
    with api.client("") as anonymous:
        answer = anonymous.get(path)
    assert answer.status_code == 200, path
    csp = answer.headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in csp, (path, csp)
    assert "default-src 'self'" in csp and "'unsafe-inline'" not in _directive(csp, "script-src")


def test_the_docs_page_allows_exactly_its_own_inline_script(api: ApiServer):
    """Swagger UI starts from one inline script: the docs page's policy names that script's
    hash, so no other inline script (an injected one) runs there."""
    import base64
    import hashlib
    import re

    with api.client("") as anonymous:
        docs = anonymous.get("/api/v1/docs")
    inline = re.findall(r"<script>(.*?)</script>", docs.text, re.S)
    assert len(inline) == 1
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    assert _directive(docs.headers["content-security-policy"], "script-src") == (
        f"script-src 'self' 'sha256-{digest}'"
    )


def _directive(csp: str, name: str) -> str:
    return next((d.strip() for d in csp.split(";") if d.strip().startswith(name + " ")), "")
