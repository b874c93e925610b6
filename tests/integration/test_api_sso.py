"""Single sign-on with OpenID Connect (docs/security.md, "Single sign-on") against a real provider
(oidc-provider, started by the suite), over HTTP without a browser (tests/e2e/test_oidc.py has the
browser): the code flow with PKCE, users made at first sign-in, the role recomputed from the groups
at every sign-in, no group no access, password sign-in turned off but for the break-glass admin;
and ID tokens the validation refuses — a forged signature, an expired one, another audience,
issuer or nonce — checked against the real provider's discovery and published keys.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from lagscope.demo.processes import free_port
from lagscope.models import ApiToken, User
from lagscope.security import users
from lagscope.security.oidc import Flow, OidcClient, SsoFailed
from lagscope.security.sso_settings import sso_config

from .api_stack import ADMIN
from .oidc_provider import ALICE, CALLBACK, new_signing_key, now, sso_stack
from .oidc_provider import SsoStack as Stack

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    with sso_stack(
        tmp_path_factory.mktemp("oidc-provider"),
        tmp_path_factory.mktemp("api-sso"),
        local_login=False,
        break_glass_admin=ADMIN[0],
    ) as started:
        yield started


def sign_in(stack: Stack, login: str, next_path: str = "/") -> httpx.Response:
    """A person at a browser: Lagscope's start → the provider's login form → back at the
    callback → /login?sso=1, where the page collects the outcome. Returns that answer."""
    api_url = stack.api.url
    with httpx.Client(timeout=30, follow_redirects=False) as browser:
        url = f"{api_url}/api/v1/auth/oidc/start?next={next_path}"
        for _ in range(20):
            answer = browser.get(url)
            if answer.is_redirect:
                url = urljoin(url, answer.headers["location"])
                if url == f"{api_url}/login?sso=1":
                    return browser.post(f"{api_url}/api/v1/auth/oidc/session")
                continue
            assert answer.status_code == 200, answer.text[:500]
            form = re.search(r'<form[^>]*action="([^"]+)"', answer.text)
            assert form and 'name="login"' in answer.text, answer.text[:500]
            posted = browser.post(
                urljoin(url, form.group(1)),
                data={"prompt": "login", "login": login, "password": "any password"},
            )
            assert posted.is_redirect, posted.text[:500]
            url = urljoin(url, posted.headers["location"])
    raise AssertionError("the sign-in did not come back to Lagscope")


def me(stack: Stack, token: str) -> dict[str, object]:
    with stack.api.client(token) as client:
        answer = client.get("/api/v1/auth/me")
        answer.raise_for_status()
        return dict(answer.json())


def test_the_start_asks_for_a_code_with_pkce_state_and_nonce(stack: Stack):
    with httpx.Client(base_url=stack.api.url) as browser:
        answer = browser.get("/api/v1/auth/oidc/start", params={"next": "/clusters/1"})
    assert answer.status_code == 302
    target = urlsplit(answer.headers["location"])
    assert f"{target.scheme}://{target.netloc}" == stack.provider.issuer
    asked = {k: v[0] for k, v in parse_qs(target.query).items()}
    assert asked["response_type"] == "code"
    assert asked["client_id"] == stack.provider.client_id
    assert asked["redirect_uri"] == f"{stack.api.url}{CALLBACK}"
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert len(asked["state"]) >= 32 and len(asked["nonce"]) >= 32
    assert asked["scope"] == "openid profile email groups"
    assert "client_secret" not in answer.headers["location"]
    cookie = answer.headers["set-cookie"]
    assert "httponly" in cookie.lower() and "path=/api/v1/auth/oidc" in cookie.lower()
    assert "samesite=lax" in cookie.lower()
    # What the flow keeps is sealed: neither the state nor the verifier shows in the cookie.
    assert asked["state"] not in cookie


def test_first_sign_in_makes_the_user_with_the_role_of_their_group(stack: Stack, caplog):
    stack.provider.set_accounts({"alice-sub": {**ALICE, "groups": ["lagscope-admins"]}})
    caplog.set_level(logging.INFO, logger="lagscope.auth")
    answer = sign_in(stack, "alice-sub", next_path="/clusters/3?range=1h")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["next"] == "/clusters/3?range=1h"
    assert me(stack, body["token"]) == {
        "user_id": me(stack, body["token"])["user_id"],
        "username": "alice",
        "role": "admin",
        "demo": False,
    }
    with stack.api.sessions() as session:
        user = users.find_user(session, "alice")
        assert user is not None and user.oidc_subject == "alice-sub"
        assert user.oidc_issuer == stack.provider.issuer
        kinds = {t.kind for t in session.query(ApiToken).filter_by(user_id=user.id)}
        assert kinds == {"session"}
    # The token is in no log line, and neither is the client secret.
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "alice signed in as admin" in logged
    assert body["token"] not in logged and stack.provider.client_secret not in logged


def test_the_outcome_is_collected_once(stack: Stack):
    stack.provider.set_accounts(
        {"carol-sub": {"preferred_username": "carol", "groups": ["everyone-read"]}}
    )
    api_url = stack.api.url
    answer = sign_in(stack, "carol-sub")
    assert answer.status_code == 200 and me(stack, answer.json()["token"])["role"] == "viewer"
    with httpx.Client(base_url=api_url) as other_browser:
        again = other_browser.post("/api/v1/auth/oidc/session")
    assert again.status_code == 401 and "no single sign-on to collect" in again.json()["detail"]


def test_the_role_follows_the_groups_at_every_sign_in(stack: Stack):
    provider = stack.provider
    provider.set_accounts(
        {
            "dave-sub": {
                "preferred_username": "dave",
                "groups": ["lagscope-admins", "lagscope-viewers"],
            }
        }
    )
    first = sign_in(stack, "dave-sub").json()["token"]
    assert me(stack, first)["role"] == "admin"
    with stack.api.client(first) as client:
        made = client.post("/api/v1/auth/tokens", json={"name": "script"})
        assert made.status_code == 201, made.text
        script_token = made.json()["token"]

    provider.set_accounts(
        {"dave-sub": {"preferred_username": "dave", "groups": ["lagscope-editors"]}}
    )
    second = sign_in(stack, "dave-sub").json()["token"]
    assert me(stack, second)["role"] == "editor"
    # A token acts with its user's role: the script token lost admin too.
    with stack.api.client(script_token) as client:
        assert client.get("/api/v1/users").status_code == 403

    provider.set_accounts({"dave-sub": {"preferred_username": "dave", "groups": ["other"]}})
    refused = sign_in(stack, "dave-sub")
    assert refused.status_code == 403
    assert "none of the groups that give a role" in refused.json()["detail"]
    assert "Test IdP" in refused.json()["detail"]
    # No group, no access: every token they held is revoked.
    for token in (first, second, script_token):
        with stack.api.client(token) as client:
            assert client.get("/api/v1/auth/me").status_code == 401


def test_a_provider_account_never_takes_over_a_local_one(stack: Stack):
    with stack.api.sessions() as session, session.begin():
        users.create_user(session, "erin", "erin-local-password", "viewer")
    stack.provider.set_accounts(
        {"erin-at-idp": {"preferred_username": "erin", "groups": ["lagscope-admins"]}}
    )
    token = sign_in(stack, "erin-at-idp").json()["token"]
    who = me(stack, token)
    assert who["username"] != "erin" and str(who["username"]).startswith("erin-")
    assert who["role"] == "admin"
    with stack.api.sessions() as session:
        local = users.find_user(session, "erin")
        assert local is not None and local.role == "viewer" and local.oidc_subject is None


def test_a_user_disabled_here_is_refused_whatever_the_groups(stack: Stack):
    stack.provider.set_accounts(
        {"fay-sub": {"preferred_username": "fay", "groups": ["lagscope-editors"]}}
    )
    assert sign_in(stack, "fay-sub").status_code == 200
    with stack.api.sessions() as session, session.begin():
        user = session.query(User).filter_by(oidc_subject="fay-sub").one()
        user.disabled = True
    refused = sign_in(stack, "fay-sub")
    assert refused.status_code == 403 and "disabled" in refused.json()["detail"]


def test_a_callback_without_this_browsers_flow_is_refused(stack: Stack):
    with httpx.Client(base_url=stack.api.url) as browser:
        started = browser.get("/api/v1/auth/oidc/start")
        assert started.status_code == 302
        # Another state than the one this browser's flow holds (a forged or replayed answer).
        back = browser.get(CALLBACK, params={"code": "x", "state": "not-the-state"})
        assert back.status_code == 303 and back.headers["location"] == "/login?sso=1"
        outcome = browser.post("/api/v1/auth/oidc/session")
    assert (
        outcome.status_code == 401
        and "expired or was started elsewhere" in outcome.json()["detail"]
    )
    with httpx.Client(base_url=stack.api.url) as stranger:  # no flow cookie at all
        stranger.get(CALLBACK, params={"code": "x", "state": "y"})
        assert stranger.post("/api/v1/auth/oidc/session").status_code == 401


def test_the_page_to_return_to_is_a_path_on_this_site(stack: Stack):
    stack.provider.set_accounts(
        {"gus-sub": {"preferred_username": "gus", "groups": ["lagscope-viewers"]}}
    )
    for evil in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
        assert sign_in(stack, "gus-sub", next_path=evil).json()["next"] == "/"


def test_passwords_sign_in_the_break_glass_admin_only(stack: Stack):
    with stack.api.sessions() as session, session.begin():
        users.create_user(session, "hank", "hank-local-password", "editor")
    with httpx.Client(base_url=stack.api.url) as anonymous:
        methods = anonymous.get("/api/v1/auth/methods").json()
        assert methods == {"password": "break_glass", "sso_name": "Test IdP"}
        refused = anonymous.post(
            "/api/v1/auth/login", json={"username": "hank", "password": "hank-local-password"}
        )
        wrong = anonymous.post(
            "/api/v1/auth/login", json={"username": ADMIN[0], "password": "not-the-password"}
        )
        glass = anonymous.post(
            "/api/v1/auth/login", json={"username": "ADMIN", "password": ADMIN[1]}
        )
    assert refused.status_code == 401 and "sign in with Test IdP" in refused.json()["detail"]
    # The same answer for the break-glass name with a wrong password: nothing tells which it is.
    assert wrong.status_code == 401 and wrong.json()["detail"] == refused.json()["detail"]
    assert glass.status_code == 200, glass.text
    assert me(stack, glass.json()["token"])["role"] == "admin"


def test_sign_out_ends_the_single_sign_on_session(stack: Stack):
    stack.provider.set_accounts(
        {"ivy-sub": {"preferred_username": "ivy", "groups": ["lagscope-viewers"]}}
    )
    token = sign_in(stack, "ivy-sub").json()["token"]
    with stack.api.client(token) as client:
        assert client.post("/api/v1/auth/logout").status_code == 204
        assert client.get("/api/v1/auth/me").status_code == 401


def test_no_answer_carries_the_client_secret(stack: Stack):
    secret = stack.provider.client_secret
    with httpx.Client(base_url=stack.api.url) as anonymous:
        for path in ("/api/v1/auth/methods", "/api/v1/openapi.json"):
            assert secret not in anonymous.get(path).text
        assert secret not in anonymous.get("/api/v1/auth/oidc/start").headers["location"]


# --- ID tokens the validation refuses, against the real provider's discovery and keys --------


@pytest.fixture(scope="module")
def client(stack: Stack) -> OidcClient:
    config = sso_config(stack.api.settings)
    assert config is not None
    return OidcClient(config)


def claims(stack: Stack, **changes: object) -> dict[str, object]:
    issued = now()
    base: dict[str, object] = {
        "iss": stack.provider.issuer,
        "sub": "alice-sub",
        "aud": stack.provider.client_id,
        "iat": issued,
        "exp": issued + 300,
        "nonce": "the-nonce",
    }
    return {**base, **changes}


def test_a_token_signed_with_the_providers_key_passes(stack: Stack, client: OidcClient):
    token = stack.provider.sign(claims(stack))
    assert client.validate_id_token(token, "the-nonce")["sub"] == "alice-sub"


def test_a_forged_signature_is_refused(stack: Stack, client: OidcClient):
    forger = new_signing_key()  # same key id, another key
    with pytest.raises(SsoFailed, match="bad_signature"):
        client.validate_id_token(stack.provider.sign(claims(stack), key=forger), "the-nonce")
    # Claims changed after signing: the signature no longer matches either.
    header, _, signature = stack.provider.sign(claims(stack)).split(".")
    other_payload = stack.provider.sign(claims(stack, sub="mallory")).split(".")[1]
    with pytest.raises(SsoFailed, match="bad_signature"):
        client.validate_id_token(f"{header}.{other_payload}.{signature}", "the-nonce")


def test_an_expired_token_is_refused(stack: Stack, client: OidcClient):
    issued = now() - 3600
    expired = stack.provider.sign(claims(stack, iat=issued, exp=issued + 300))
    with pytest.raises(SsoFailed, match="expired_token"):
        client.validate_id_token(expired, "the-nonce")


@pytest.mark.parametrize(
    ("changes", "nonce", "why"),
    [
        ({"aud": "another-client"}, "the-nonce", "aud"),
        ({"iss": "http://127.0.0.1:1"}, "the-nonce", "iss"),
        ({}, "another-nonce", "nonce"),
        ({"iat": now() + 3600, "exp": now() + 7200}, "the-nonce", "issued in the future"),
    ],
)
def test_other_wrong_claims_are_refused(stack: Stack, client: OidcClient, changes, nonce, why):
    with pytest.raises(SsoFailed, match=why):
        client.validate_id_token(stack.provider.sign(claims(stack, **changes)), nonce)


def test_unsigned_and_symmetric_tokens_are_refused(stack: Stack, client: OidcClient):
    from joserfc import jwt
    from joserfc.jwk import OctKey

    secret_key = OctKey.import_key(stack.provider.client_secret.encode() * 2)
    hs256 = jwt.encode({"alg": "HS256"}, claims(stack), secret_key)
    with pytest.raises(SsoFailed, match="refused"):
        client.validate_id_token(hs256, "the-nonce")
    payload = stack.provider.sign(claims(stack)).split(".")[1]
    none_header = "eyJhbGciOiJub25lIn0"  # {"alg":"none"}
    with pytest.raises(SsoFailed, match="refused"):
        client.validate_id_token(f"{none_header}.{payload}.", "the-nonce")
    with pytest.raises(SsoFailed, match=r"malformed|refused"):
        client.validate_id_token("not a token", "the-nonce")


def test_a_code_the_provider_does_not_know_is_refused(stack: Stack, client: OidcClient):
    with pytest.raises(SsoFailed, match="refused the code"):
        client.finish("not-a-code", Flow("s", "n", "v" * 64, "/"))


def test_a_provider_that_is_not_the_configured_issuer_or_is_down_is_refused(stack: Stack):
    config = sso_config(stack.api.settings)
    assert config is not None
    # Discovery answers, but names its issuer without the trailing slash configured here.
    misnamed = OidcClient(replace(config, issuer=stack.provider.issuer + "/"))
    with pytest.raises(SsoFailed, match="names the issuer"):
        misnamed.start("/")
    down = OidcClient(replace(config, issuer=f"http://127.0.0.1:{free_port()}"))
    with pytest.raises(SsoFailed, match="discovery document"):
        down.start("/")
