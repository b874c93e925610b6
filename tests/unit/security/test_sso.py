"""Single sign-on's pieces without a provider (tests/integration/test_api_sso.py and
tests/e2e/test_oidc.py have the real one): settings refused at start, groups to roles, who a
password may still sign in, the sealed cookies, the sign-in use case over an in-memory store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import Fernet
from pydantic import ValidationError
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.api.routers.oidc import safe_next
from lagscope.config import Settings
from lagscope.errors import NotAuthenticated, PermissionDenied
from lagscope.models import ApiToken, Base, User
from lagscope.models.audit import AuditEvent
from lagscope.security import sso, users
from lagscope.security.oidc import OidcClient
from lagscope.security.oidc_claims import Identity
from lagscope.security.sso_cookies import CookieSeal
from lagscope.security.sso_settings import (
    SsoConfig,
    password_login_allowed,
    password_login_mode,
    sso_config,
)

KEY = "q7Vd3kPz_Lr9XbN2mT5wYc8HgJ4sFe6A"
ISSUER = "https://idp.example.test/realms/ops"
SSO = {
    "oidc_issuer": ISSUER,
    "oidc_client_id": "lagscope",
    "oidc_client_secret": "s3cret-value",
    "oidc_admin_groups": "ops-admins, dba",
    "oidc_editor_groups": "ops",
    "oidc_viewer_groups": "staff",
}


def settings(**changes: object) -> Settings:
    return Settings(secret_key=KEY, **{**SSO, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"oidc_issuer": "http://idp.example.test"}, "https://"),
        ({"oidc_issuer": "https://idp.example.test?x=1"}, "without query"),
        ({"oidc_issuer": "idp.example.test"}, "https://"),
        ({"oidc_client_id": " "}, "LAGSCOPE_OIDC_CLIENT_ID"),
        ({"oidc_scopes": "profile email"}, "include openid"),
        ({"oidc_roles_claim": ""}, "LAGSCOPE_OIDC_ROLES_CLAIM"),
        (
            {"oidc_admin_groups": "", "oidc_editor_groups": " , ", "oidc_viewer_groups": ""},
            "nobody could sign in",
        ),
        ({"oidc_redirect_url": "https://dash.example.test/callback"}, "ending with"),
        ({"oidc_redirect_url": "javascript:alert(1)//api/v1/auth/oidc/callback"}, "http"),
        ({"oidc_issuer": "", "local_login": False}, "nobody sign in"),
    ],
)
def test_settings_that_cannot_work_stop_the_start(changes, why):
    with pytest.raises(ValidationError, match=why):
        settings(**changes)


def test_settings_that_work():
    assert settings().oidc_redirect() == "http://localhost:8000/api/v1/auth/oidc/callback"
    behind = settings(external_url="https://lag.example.test/")
    assert behind.oidc_redirect() == "https://lag.example.test/api/v1/auth/oidc/callback"
    assert settings(oidc_issuer="http://127.0.0.1:9000").oidc_issuer  # a local test provider
    assert not Settings(secret_key=KEY).oidc_issuer  # off by default
    assert settings(local_login="off", break_glass_admin="root").local_login is False


def test_the_client_secret_is_never_printed():
    configured = settings()
    assert "s3cret-value" not in repr(configured) and "s3cret-value" not in str(configured)
    assert "s3cret-value" not in configured.model_dump_json()
    config = sso_config(configured)
    assert config is not None and config.client_secret == "s3cret-value"


def test_the_highest_role_of_the_groups_wins():
    config = sso_config(settings())
    assert config is not None
    assert config.role_for(("staff", "dba")) == "admin"
    assert config.role_for(("staff", "ops")) == "editor"
    assert config.role_for(("staff",)) == "viewer"
    assert config.role_for(("Staff", "sales")) is None  # claim values compare exactly
    assert config.role_for(()) is None
    assert config.scopes == "openid profile email"
    assert config.secure_cookies is False
    assert sso_config(Settings(secret_key=KEY)) is None


def test_passwords_sign_in_everyone_or_the_break_glass_account_only():
    on = settings()
    assert password_login_mode(on) == "on" and password_login_allowed(on, "anyone")
    off = settings(local_login=False, break_glass_admin="Root")
    assert password_login_mode(off) == "break_glass"
    assert password_login_allowed(off, "root") and password_login_allowed(off, "ROOT")
    assert not password_login_allowed(off, "alice")
    none = settings(local_login=False)
    assert password_login_mode(none) == "off" and not password_login_allowed(none, "root")


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("/clusters/3?range=1h", "/clusters/3?range=1h"),
        (None, "/"),
        ("", "/"),
        ("https://evil.example/", "/"),
        ("//evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("/x\r\nSet-Cookie: a=b", "/"),
        ("settings", "/"),
    ],
)
def test_the_page_to_return_to_stays_on_this_site(given, kept):
    assert safe_next(given) == kept


def test_sealed_cookies_open_only_for_their_purpose_and_key_and_in_time():
    seal = CookieSeal(KEY)
    sealed = seal.seal("flow", {"state": "abc"})
    assert "abc" not in sealed
    assert seal.open("flow", sealed, 60) == {"state": "abc"}
    assert seal.open("done", sealed, 60) is None  # another purpose
    assert CookieSeal(KEY[::-1]).open("flow", sealed, 60) is None  # another key
    assert seal.open("flow", sealed[:-4] + "AAAA", 60) is None  # tampered
    assert seal.open("flow", None, 60) is None
    old = seal._fernet.encrypt_at_time(b'{"purpose": "flow", "state": "abc"}', 1_000_000)
    assert seal.open("flow", old.decode(), 600) is None  # expired
    # Not the secret box's key either: a stored credential never opens as a cookie.
    assert isinstance(seal._fernet, Fernet)


def test_groups_are_read_from_a_claim_or_a_dotted_path():
    def groups(name: str, claims: dict[str, object]) -> tuple[str, ...]:
        config = sso_config(settings(oidc_roles_claim=name))
        assert config is not None
        return OidcClient(config).identity({"sub": "s", **claims}).groups

    assert groups("groups", {"groups": ["a", "b", 3]}) == ("a", "b")
    assert groups("groups", {"groups": "a"}) == ("a",)
    assert groups("groups", {}) == ()
    assert groups("realm_access.roles", {"realm_access": {"roles": ["r"]}}) == ("r",)
    url = "https://lag.example.test/roles"  # Auth0's namespaced claims have dots
    assert groups(url, {url: ["x"]}) == ("x",)


# --- the sign-in use case, over an in-memory store ---------------------------------------------


@pytest.fixture
def sessions() -> Iterator[sessionmaker[Session]]:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    yield sessionmaker(engine, expire_on_commit=False)
    engine.dispose()


@pytest.fixture
def config() -> SsoConfig:
    made = sso_config(settings())
    assert made is not None
    return made


def person(*groups: str, username: str = "alice", subject: str = "sub-1") -> Identity:
    return Identity(ISSUER, subject, username, groups)


def user_of(sessions: sessionmaker[Session], subject: str) -> User:
    with sessions() as session:
        found = sso.find_sso_user(session, ISSUER, subject)
        assert found is not None
        return found


def test_sign_in_makes_the_user_then_follows_the_groups(sessions, config):
    token = sso.sign_in(sessions, person("dba"), config, "10.0.0.9")
    assert token.startswith(users.TOKEN_PREFIX)
    assert user_of(sessions, "sub-1").role == "admin"
    with sessions() as session:
        assert users.authenticate(session, token).role == "admin"
        assert users.authenticate(session, token).token_kind == "session"
    sso.sign_in(sessions, person("staff"), config)
    assert user_of(sessions, "sub-1").role == "viewer"
    with sessions() as session:
        trail = session.scalars(select(AuditEvent).order_by(AuditEvent.id)).all()
    assert [(e.actor, e.kind, e.action) for e in trail] == [
        ("single sign-on", "user", "create"),
        ("single sign-on", "user", "update"),
    ]
    assert trail[0].source == "10.0.0.9" and trail[1].changes["role"] == ["admin", "viewer"]
    assert "password_hash" not in str(trail[1].changes)


def test_no_group_refuses_and_revokes_every_token(sessions, config):
    sso.sign_in(sessions, person("ops"), config)
    with sessions() as session, session.begin():
        user = session.merge(user_of(sessions, "sub-1"))
        users.issue_token(session, user, "script")
    with pytest.raises(PermissionDenied, match="none of the groups"):
        sso.sign_in(sessions, person("sales"), config)
    with sessions() as session:
        assert session.scalars(select(ApiToken)).all() == []


@pytest.mark.slow  # argon2
def test_a_local_user_of_the_same_name_is_never_taken_over(sessions, config):
    with sessions() as session, session.begin():
        users.create_user(session, "admin", "local-admin-password", "admin")
    sso.sign_in(sessions, person("staff", username="admin", subject="idp-admin"), config)
    made = user_of(sessions, "idp-admin")
    assert made.username.startswith("admin-") and made.role == "viewer"
    with sessions() as session:
        local = users.find_user(session, "admin")
        assert local is not None and local.oidc_subject is None and local.role == "admin"


def test_odd_provider_names_become_usernames(sessions, config):
    sso.sign_in(sessions, person("staff", username="Zoë Smith <z@x>", subject="z"), config)
    assert user_of(sessions, "z").username == "Zo__Smith__z@x_"


def test_a_password_never_signs_a_provider_user_in(sessions, config):
    sso.sign_in(sessions, person("dba"), config)
    with sessions() as session, pytest.raises(NotAuthenticated):
        users.login(session, "alice", sso.NO_PASSWORD)


@pytest.mark.slow  # argon2
def test_password_login_turned_off_answers_like_a_wrong_password(sessions):
    with sessions() as session, session.begin():
        users.create_user(session, "bob", "bob-local-password", "editor")
    refusal = "wrong username or password (break-glass only)"
    with sessions() as session:
        with pytest.raises(NotAuthenticated) as off:
            users.login(session, "bob", "bob-local-password", allowed=False, refusal=refusal)
        with pytest.raises(NotAuthenticated) as wrong:
            users.login(session, "bob", "not-it", allowed=True, refusal=refusal)
        assert str(off.value) == str(wrong.value) == refusal
        assert users.login(session, "bob", "bob-local-password").startswith("lgs_")
