"""Single sign-on's settings (OpenID Connect), and their judgement at start: settings that
cannot work stop the start, not the first sign-in.

The provider's keys vouch for every identity, so its issuer must be reached over https (http to
this machine only), and a configuration that would let nobody sign in is refused outright.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from lagscope.config.network import is_loopback

if TYPE_CHECKING:
    from lagscope.config.settings import Settings

# Where single sign-on's provider sends the browser back (api/routers/oidc.py).
OIDC_CALLBACK_PATH = "/api/v1/auth/oidc/callback"


class SsoSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LAGSCOPE_", extra="ignore")

    # Single sign-on with OpenID Connect (docs/security.md, "Single sign-on"): the provider's
    # issuer URL (discovery at <issuer>/.well-known/openid-configuration; empty: no single
    # sign-on), this client's id and secret there, what the login page calls it, the scopes
    # asked for, the claim holding the person's groups (a dotted path reaches into an object),
    # and which groups give which role (comma-separated; the highest role wins, no group: no
    # access). The redirect URL is the callback the provider sends the browser back to; empty:
    # LAGSCOPE_EXTERNAL_URL + /api/v1/auth/oidc/callback.
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: SecretStr | None = None
    oidc_provider_name: str = "SSO"
    oidc_scopes: str = "openid profile email"
    oidc_roles_claim: str = "groups"
    oidc_admin_groups: str = ""
    oidc_editor_groups: str = ""
    oidc_viewer_groups: str = ""
    oidc_redirect_url: str = ""
    # Password sign-in: off refuses every password login except the break-glass account's
    # (a local admin for when the provider is down); tokens already issued stay valid.
    local_login: bool = True
    break_glass_admin: str | None = None


def redirect_url(settings: Settings) -> str:
    """The callback the provider sends the browser back to."""
    return (
        settings.oidc_redirect_url.strip() or settings.external_url.rstrip("/") + OIDC_CALLBACK_PATH
    )


def check_sso(settings: Settings) -> None:
    """Raise ValueError on single sign-on settings that cannot work."""
    issuer = settings.oidc_issuer.strip()
    if not issuer:
        if not settings.local_login and not settings.demo:
            raise ValueError(
                "LAGSCOPE_LOCAL_LOGIN=off without LAGSCOPE_OIDC_ISSUER would let nobody sign "
                "in: configure single sign-on first"
            )
        return
    url = urlsplit(issuer)
    # Its keys vouch for every identity: fetched over https (http to this machine only).
    local = is_loopback(url.hostname or "")
    trusted = url.scheme == "https" or (url.scheme == "http" and local)
    if not trusted or not url.hostname or url.query or url.fragment:
        raise ValueError(
            "LAGSCOPE_OIDC_ISSUER must be an https:// URL (http:// to a loopback host only), "
            f"without query or fragment: {issuer!r}"
        )
    _check_client(settings)
    _check_redirect(settings)


def _check_client(settings: Settings) -> None:
    groups = (settings.oidc_admin_groups, settings.oidc_editor_groups, settings.oidc_viewer_groups)
    if not settings.oidc_client_id.strip():
        raise ValueError("LAGSCOPE_OIDC_CLIENT_ID must be set with LAGSCOPE_OIDC_ISSUER")
    if "openid" not in settings.oidc_scopes.replace(",", " ").split():
        raise ValueError("LAGSCOPE_OIDC_SCOPES must include openid")
    if not settings.oidc_roles_claim.strip():
        raise ValueError("LAGSCOPE_OIDC_ROLES_CLAIM must name the claim holding the groups")
    if not any(name.strip() for text in groups for name in text.split(",")):
        raise ValueError(
            "single sign-on gives a role only to members of LAGSCOPE_OIDC_ADMIN_GROUPS, "
            "_EDITOR_GROUPS or _VIEWER_GROUPS, and all three are empty: nobody could sign in"
        )


def _check_redirect(settings: Settings) -> None:
    back = urlsplit(redirect_url(settings))
    if (
        back.scheme not in ("http", "https")
        or not back.hostname
        or back.query
        or not back.path.endswith(OIDC_CALLBACK_PATH)
    ):
        raise ValueError(
            f"the redirect URL (LAGSCOPE_OIDC_REDIRECT_URL, else LAGSCOPE_EXTERNAL_URL + "
            f"{OIDC_CALLBACK_PATH}) must be an http(s) URL ending with {OIDC_CALLBACK_PATH}: "
            f"{redirect_url(settings)!r}"
        )
