"""Single sign-on's settings read once: who the provider is, where it sends the browser back,
which groups give which role, and whether passwords still sign anyone in.

Pure (no store, no network). ``config.Settings`` refuses a start with settings that cannot
work; the sign-in routes build an :class:`SsoConfig` from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lagscope.config import Settings

# Highest first: a person in an admin group and a viewer group is an admin.
ROLE_ORDER = ("admin", "editor", "viewer")


@dataclass(frozen=True, slots=True)
class SsoConfig:
    issuer: str
    client_id: str
    client_secret: str | None
    provider_name: str
    scopes: str
    redirect_url: str
    roles_claim: str
    # role -> the claim values that give it
    groups: dict[str, frozenset[str]]

    def role_for(self, groups: tuple[str, ...]) -> str | None:
        """The highest role one of ``groups`` gives; None: none of them gives any."""
        held = set(groups)
        for role in ROLE_ORDER:
            if held & self.groups[role]:
                return role
        return None

    @property
    def secure_cookies(self) -> bool:
        return self.redirect_url.startswith("https://")


def names(text: str) -> frozenset[str]:
    return frozenset(n.strip() for n in text.split(",") if n.strip())


def sso_config(settings: Settings) -> SsoConfig | None:
    """None when single sign-on is off (no issuer)."""
    if not settings.oidc_issuer.strip():
        return None
    secret = settings.oidc_client_secret.get_secret_value() if settings.oidc_client_secret else ""
    return SsoConfig(
        issuer=settings.oidc_issuer.strip(),
        client_id=settings.oidc_client_id.strip(),
        client_secret=secret or None,
        provider_name=settings.oidc_provider_name.strip() or "SSO",
        scopes=" ".join(settings.oidc_scopes.replace(",", " ").split()),
        redirect_url=settings.oidc_redirect(),
        roles_claim=settings.oidc_roles_claim.strip(),
        groups={
            "admin": names(settings.oidc_admin_groups),
            "editor": names(settings.oidc_editor_groups),
            "viewer": names(settings.oidc_viewer_groups),
        },
    )


def password_login_allowed(settings: Settings, username: str) -> bool:
    """Whether a password may sign ``username`` in: anyone with LAGSCOPE_LOCAL_LOGIN on, only
    the break-glass account (compared like usernames are, case-insensitively) with it off."""
    if settings.local_login:
        return True
    glass = (settings.break_glass_admin or "").strip()
    return bool(glass) and glass.lower() == username.lower()


def password_login_mode(settings: Settings) -> Literal["on", "break_glass", "off"]:
    """What the login page offers: "on", "break_glass" (one account only) or "off"."""
    if settings.local_login:
        return "on"
    return "break_glass" if (settings.break_glass_admin or "").strip() else "off"
