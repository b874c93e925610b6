"""What an OpenID provider's claims say: who signed in (issuer, subject, a name) and which
groups they are in, and how userinfo's answer joins the ID token's claims.

Providers put the groups in different places (a plain claim, a namespaced URL, a path into an
object), so the reading is kept here, apart from the protocol that fetched and checked them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The ID token's own claims: never overwritten by what userinfo says.
_PROTECTED = frozenset(
    ("iss", "sub", "aud", "exp", "iat", "nbf", "nonce", "azp", "at_hash", "auth_time", "jti")
)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the provider says signed in, from the validated ID token (and userinfo)."""

    issuer: str
    subject: str
    username: str
    groups: tuple[str, ...]


def claim(claims: dict[str, Any], name: str) -> Any:
    """A claim by name, or by a dotted path into objects (Keycloak's ``realm_access.roles``)
    when no claim has the whole name (Auth0's namespaced claims are URLs with dots)."""
    if name in claims:
        return claims[name]
    value: Any = claims
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def identity_of(claims: dict[str, Any], issuer: str, roles_claim: str) -> Identity:
    """The person the validated claims name, with their groups from ``roles_claim``."""
    found = claim(claims, roles_claim)
    if isinstance(found, str):
        groups: tuple[str, ...] = (found,)
    elif isinstance(found, list):
        groups = tuple(g for g in found if isinstance(g, str))
    else:
        groups = ()
    subject = str(claims["sub"])
    name = claims.get("preferred_username") or claims.get("email") or subject
    return Identity(issuer, subject, str(name), groups)


def with_userinfo(claims: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """Userinfo's claims added to the ID token's; the signed ID token's own claims win."""
    return {**{k: v for k, v in info.items() if k not in _PROTECTED}, **claims}
