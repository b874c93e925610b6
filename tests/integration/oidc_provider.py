"""A real OpenID provider for the single sign-on tests: panva's oidc-provider (npm, in
tests/oidc_provider/) run by Node on a free loopback port, with one static client, the accounts
a test writes (read again at every request) and signing keys this helper makes, so a test can
also sign a token with the provider's own key (an expired one) or with another (a forgery).

Its npm packages are installed by ``npm ci`` once per change of its package-lock.json (the
Makefile's ``test`` does it too; a stamp file marks it done).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from joserfc import jwt
from joserfc.jwk import RSAKey

from lagscope.demo.processes import free_port

from .api_stack import ApiServer, api_server, sqlite_url
from .waiting import wait_until

PACKAGE = Path(__file__).resolve().parents[1] / "oidc_provider"
STAMP = PACKAGE / "node_modules" / ".lagscope-stamp"
CLIENT_ID = "lagscope-test"
CLIENT_SECRET = "test-client-secret-7d1f0a4c9e2b"  # a throwaway test client
KEY_ID = "test-signing-key"


def ensure_packages() -> None:
    """``npm ci`` in tests/oidc_provider when its lock changed since the last one."""
    lock = PACKAGE / "package-lock.json"
    if STAMP.is_file() and STAMP.stat().st_mtime >= lock.stat().st_mtime:
        return
    npm = shutil.which("npm")
    assert npm, "npm is needed for the OpenID provider of the tests (scripts/ensure-system-deps.sh)"
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=PACKAGE,
        check=True,
        timeout=300,
    )
    STAMP.touch()


@dataclass
class OidcProvider:
    issuer: str
    client_id: str
    client_secret: str
    accounts_file: Path
    signing_key: RSAKey

    def set_accounts(self, accounts: dict[str, dict[str, Any]]) -> None:
        """Who may sign in, with their claims: ``{"alice": {"groups": [...], ...}}``. Taken
        from the next request on (written whole, then renamed: never read half-written)."""
        partial = self.accounts_file.with_suffix(".tmp")
        partial.write_text(json.dumps(accounts))
        partial.replace(self.accounts_file)

    def settings(self, redirect_url: str, **overrides: object) -> dict[str, object]:
        """Lagscope's settings for this provider (``api_server`` keyword arguments)."""
        return {
            "oidc_issuer": self.issuer,
            "oidc_client_id": self.client_id,
            "oidc_client_secret": self.client_secret,
            "oidc_provider_name": "Test IdP",
            "oidc_scopes": "openid profile email groups",
            "oidc_admin_groups": "lagscope-admins",
            "oidc_editor_groups": "lagscope-editors",
            "oidc_viewer_groups": "lagscope-viewers,everyone-read",
            "oidc_redirect_url": redirect_url,
            **overrides,
        }

    def sign(self, claims: dict[str, Any], key: RSAKey | None = None) -> str:
        """An ID token over ``claims``, signed with the provider's own key unless told."""
        used = key or self.signing_key
        header = {"alg": "RS256", "kid": used.kid or KEY_ID}
        return jwt.encode(header, claims, used)


def new_signing_key() -> RSAKey:
    return RSAKey.generate_key(
        2048, parameters={"kid": KEY_ID, "use": "sig", "alg": "RS256"}, private=True
    )


@contextmanager
def oidc_provider(directory: Path, redirect_uris: list[str]) -> Iterator[OidcProvider]:
    """The provider, answering discovery, until the block ends."""
    ensure_packages()
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    key = new_signing_key()
    jwks_file = directory / "jwks.json"
    jwks_file.write_text(json.dumps({"keys": [key.as_dict(private=True)]}))
    provider = OidcProvider(issuer, CLIENT_ID, CLIENT_SECRET, directory / "accounts.json", key)
    provider.set_accounts({})
    config = directory / "provider.json"
    config.write_text(
        json.dumps(
            {
                "issuer": issuer,
                "port": port,
                "client": {
                    "client_id": CLIENT_ID,
                    "client_secret": CLIENT_SECRET,
                    "redirect_uris": redirect_uris,
                },
                "accounts_file": str(provider.accounts_file),
                "jwks_file": str(jwks_file),
            }
        )
    )
    log_path = directory / "provider.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [shutil.which("node") or "node", str(PACKAGE / "provider.mjs"), str(config)],
            cwd=PACKAGE,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(
            lambda: process.poll() is not None or _discoverable(issuer),
            timeout_s=30,
            message="the OpenID provider answers discovery",
        )
        assert process.poll() is None, log_path.read_text()[-2000:]
        yield provider
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _discoverable(issuer: str) -> bool:
    try:
        answer = httpx.get(f"{issuer}/.well-known/openid-configuration", timeout=2)
    except httpx.TransportError:
        return False
    return answer.status_code == 200


def now() -> int:
    return int(time.time())


CALLBACK = "/api/v1/auth/oidc/callback"
ALICE = {"preferred_username": "alice", "email": "alice@example.test", "name": "Alice"}


@dataclass
class SsoStack:
    provider: OidcProvider
    api: ApiServer


@contextmanager
def sso_stack(provider_dir: Path, store_dir: Path, **api_settings: Any) -> Iterator[SsoStack]:
    """A provider and an API signing in through it: the API's port is chosen first, since the
    provider must know the callback it may send browsers back to."""
    port = free_port()
    redirect = f"http://127.0.0.1:{port}{CALLBACK}"
    with oidc_provider(provider_dir, [redirect]) as provider:
        settings = provider.settings(redirect, **api_settings)
        with api_server(sqlite_url(store_dir), port=port, **settings) as api:
            yield SsoStack(provider, api)
