"""OpenID Connect's authorization code flow with PKCE, as a relying party.

Authlib makes the requests (the authorization URL with ``state``, ``nonce`` and an S256 code
challenge; the token request with the code verifier and this client's credentials) and checks
the ID token's claims (``CodeIDToken``: issuer, audience and ``azp``, expiry, issue time,
``nonce``, ``at_hash``); joserfc checks its signature against the provider's published keys
(JWKS). httpx carries them: Authlib's own httpx client is deprecated in favour of a client this
project does not use, so its protocol client is handed a small adapter (``_Transport``).

The provider is found by discovery (``<issuer>/.well-known/openid-configuration``), whose
``issuer`` must be the configured one exactly (OpenID Connect Discovery §4.3), and is cached
for an hour; its keys are fetched again when a token names a key id they lack (a rotation).

Nothing here logs or returns a token: errors say what was wrong with one, never its text.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.client import OAuth2Client
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

from lagscope.errors import NotAuthenticated
from lagscope.security.oidc_claims import Identity, claim, identity_of, with_userinfo
from lagscope.security.sso_settings import SsoConfig

log = logging.getLogger("lagscope.auth")

METADATA_TTL_S = 3600.0
HTTP_TIMEOUT_S = 10.0
# Clock skew allowed on exp / iat / nbf (seconds).
LEEWAY_S = 60
# Signature algorithms an ID token may use: asymmetric only. HS256 with the client secret is
# allowed by the specification, but then anyone holding the secret could mint identities.
ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")


class SsoFailed(NotAuthenticated):
    """Single sign-on did not establish who the person is (provider down, a refused or invalid
    answer, a flow that expired). ``detail`` is safe to show the person."""


@dataclass(frozen=True, slots=True)
class Flow:
    """One sign-in in progress: what the callback must find again (kept sealed in a cookie)."""

    state: str
    nonce: str
    code_verifier: str
    next_path: str


class _Transport:
    """What Authlib's protocol client calls (``post`` with a form, headers and its client
    authentication) over an httpx client."""

    def __init__(self, http: httpx.Client) -> None:
        self._http = http

    def post(
        self,
        url: str,
        data: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        auth: Any = None,
        **_: Any,
    ) -> httpx.Response:
        body = urlencode(data or {})
        sent = dict(headers or {})
        if auth is not None:
            url, sent, body = auth.prepare("POST", url, sent, body)
        return self._http.post(url, content=body, headers=sent)


class OidcClient:
    """One per API process: the provider's metadata and keys are shared by every sign-in. Each
    sign-in step opens its own HTTP client (a few requests a sign-in; nothing held open)."""

    def __init__(self, config: SsoConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self._clock = clock
        self._lock = threading.Lock()
        self._metadata: dict[str, Any] | None = None
        self._metadata_at = 0.0
        self._keys: KeySet | None = None
        self._step = threading.local()  # this thread's HTTP client, while a step runs

    @contextmanager
    def _connected(self) -> Iterator[None]:
        if getattr(self._step, "http", None) is not None:  # an outer step's
            yield
            return
        with httpx.Client(timeout=HTTP_TIMEOUT_S, follow_redirects=False) as http:
            self._step.http = http
            try:
                yield
            finally:
                self._step.http = None

    @property
    def _client(self) -> httpx.Client:
        http: httpx.Client | None = getattr(self._step, "http", None)
        assert http is not None, "inside _connected() only"
        return http

    # --- discovery and keys -------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        with self._lock:
            if self._metadata is not None and time.monotonic() - self._metadata_at < METADATA_TTL_S:
                return self._metadata
        url = self.config.issuer.rstrip("/") + "/.well-known/openid-configuration"
        with self._connected():
            found = self._get_json(url, "its discovery document")
        if found.get("issuer") != self.config.issuer:
            raise SsoFailed(
                f"the provider's discovery document names the issuer {found.get('issuer')!r}, "
                f"not {self.config.issuer!r} (LAGSCOPE_OIDC_ISSUER must be exactly its issuer)"
            )
        for field in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(found.get(field), str):
                raise SsoFailed(f"the provider's discovery document has no {field}")
        with self._lock:
            self._metadata, self._metadata_at = found, time.monotonic()
        return found

    def _key_set(self, refresh: bool = False) -> KeySet:
        with self._lock:
            if self._keys is not None and not refresh:
                return self._keys
        with self._connected():
            document = self._get_json(self.metadata()["jwks_uri"], "its signing keys (JWKS)")
        try:
            keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise SsoFailed(f"the provider's signing keys cannot be read: {exc}") from None
        with self._lock:
            self._keys = keys
        return keys

    def _get_json(self, url: str, what: str) -> dict[str, Any]:
        try:
            answer = self._client.get(url, headers={"Accept": "application/json"})
            answer.raise_for_status()
            document = answer.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SsoFailed(
                f"the sign-in provider did not give {what} ({type(exc).__name__})"
            ) from None
        if not isinstance(document, dict):
            raise SsoFailed(f"the sign-in provider's {what} is not a JSON object")
        return document

    # --- the flow -----------------------------------------------------------------------------

    def _protocol(self) -> OAuth2Client:
        secret = self.config.client_secret
        return OAuth2Client(
            _Transport(self._client),
            client_id=self.config.client_id,
            client_secret=secret,
            # No secret: a public client, which PKCE alone protects.
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
            scope=self.config.scopes,
            redirect_uri=self.config.redirect_url,
            code_challenge_method="S256",
        )

    def start(self, next_path: str) -> tuple[str, Flow]:
        """The provider's authorization URL to send the browser to, and the flow to keep."""
        endpoint = self.metadata()["authorization_endpoint"]  # no request when cached
        flow = Flow(generate_token(32), generate_token(32), generate_token(64), next_path)
        with self._connected():
            url, _ = self._protocol().create_authorization_url(
                endpoint, state=flow.state, code_verifier=flow.code_verifier, nonce=flow.nonce
            )
        return str(url), flow

    def finish(self, code: str, flow: Flow) -> Identity:
        """Exchange the code (with the PKCE verifier) and validate what comes back."""
        with self._connected():
            return self._finish(code, flow)

    def _finish(self, code: str, flow: Flow) -> Identity:
        metadata = self.metadata()
        try:
            token = self._protocol().fetch_token(
                metadata["token_endpoint"],
                code=code,
                code_verifier=flow.code_verifier,
                grant_type="authorization_code",
            )
        except httpx.HTTPError as exc:
            raise SsoFailed(
                f"the sign-in provider's token endpoint did not answer ({type(exc).__name__})"
            ) from None
        except Exception as exc:  # Authlib's OAuth2Error, or a refusal that is not JSON
            error = getattr(exc, "error", None) or type(exc).__name__
            raise SsoFailed(f"the sign-in provider refused the code ({error})") from None
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise SsoFailed("the sign-in provider sent no ID token (is the openid scope asked?)")
        access_token = token.get("access_token")
        claims = self.validate_id_token(
            id_token, flow.nonce, access_token if isinstance(access_token, str) else None
        )
        if self._needs_userinfo(claims) and isinstance(access_token, str):
            claims = self._with_userinfo(claims, access_token)
        return self.identity(claims)

    def validate_id_token(
        self, id_token: str, nonce: str, access_token: str | None = None
    ) -> dict[str, Any]:
        """The ID token's claims, once its signature (the provider's keys), issuer, audience,
        expiry, issue time and nonce are right; otherwise SsoFailed saying what was wrong."""
        registry = JWSRegistry(algorithms=self._algorithms(), strict_check_header=False)
        try:
            try:
                decoded = jwt.decode(id_token, self._key_set(), registry=registry)
            except InvalidKeyIdError:  # a key rotated in since we fetched them
                decoded = jwt.decode(id_token, self._key_set(refresh=True), registry=registry)
            claims = CodeIDToken(
                decoded.claims,
                decoded.header,
                {
                    "iss": {"essential": True, "value": self.config.issuer},
                    "aud": {"essential": True, "value": self.config.client_id},
                    "sub": {"essential": True},
                    "exp": {"essential": True},
                    "iat": {"essential": True},
                },
                {"nonce": nonce, "client_id": self.config.client_id, "access_token": access_token},
            )
            claims.validate(now=int(self._clock()), leeway=LEEWAY_S)
        except JoseError as exc:
            why = f"{exc.error}: {exc.description}" if exc.description else exc.error
            log.warning("single sign-on: an ID token was refused (%s)", why)
            raise SsoFailed(f"the provider's ID token was refused ({why})") from None
        except ValueError as exc:  # not a JWT at all
            log.warning("single sign-on: an ID token was refused (%s)", type(exc).__name__)
            raise SsoFailed("the provider's ID token was refused (malformed)") from None
        if not claims.get("nonce"):  # a nonce was sent, so one must come back (Core §3.1.3.7)
            raise SsoFailed("the provider's ID token was refused (no nonce)")
        return dict(claims)

    def _algorithms(self) -> list[str]:
        offered = self.metadata().get("id_token_signing_alg_values_supported")
        usable = [a for a in offered if a in ASYMMETRIC] if isinstance(offered, list) else []
        return usable or ["RS256"]

    def _needs_userinfo(self, claims: dict[str, Any]) -> bool:
        """The groups (or a name) are often not in the ID token of a code flow, only at the
        userinfo endpoint (oidc-provider's default, Okta's without a custom claim, …)."""
        return claim(claims, self.config.roles_claim) is None or not (
            claims.get("preferred_username") or claims.get("email")
        )

    def _with_userinfo(self, claims: dict[str, Any], access_token: str) -> dict[str, Any]:
        endpoint = self.metadata().get("userinfo_endpoint")
        if not isinstance(endpoint, str):
            return claims
        try:
            answer = self._client.get(
                endpoint,
                headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
            )
            answer.raise_for_status()
            info = answer.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise SsoFailed(
                f"the sign-in provider's userinfo endpoint did not answer ({type(exc).__name__})"
            ) from None
        # Core §5.3.2: the userinfo answer is about the ID token's subject, or it is not used.
        if not isinstance(info, dict) or info.get("sub") != claims["sub"]:
            raise SsoFailed("the provider's userinfo answer is about another subject")
        # The signed ID token's own claims win over what userinfo adds.
        return with_userinfo(claims, info)

    def identity(self, claims: dict[str, Any]) -> Identity:
        return identity_of(claims, self.config.issuer, self.config.roles_claim)
