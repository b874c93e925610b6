"""Small encrypted, time-limited values a sign-in keeps in the browser between the provider's
redirects: the flow in progress, then the sign-in's outcome until the page collects it.

Sealed under a key derived for this use alone, so nothing sealed here opens as anything else.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


class CookieSeal:
    """Small encrypted, time-limited values kept in the browser between the redirects (the
    flow in progress; the sign-in's outcome until the page collects it). Fernet under a key
    derived from LAGSCOPE_SECRET_KEY for this use alone (HKDF), so nothing sealed here opens
    as anything else, nor the other way round."""

    def __init__(self, secret_key: str) -> None:
        derived = HKDF(
            algorithm=hashes.SHA256(), length=32, salt=None, info=b"lagscope sso cookies v1"
        ).derive(secret_key.encode())
        self._fernet = Fernet(base64.urlsafe_b64encode(derived))

    def seal(self, purpose: str, value: dict[str, Any]) -> str:
        return self._fernet.encrypt(json.dumps({"purpose": purpose, **value}).encode()).decode()

    def open(self, purpose: str, sealed: str | None, max_age_s: int) -> dict[str, Any] | None:
        """The value, or None: absent, tampered with, older than ``max_age_s``, or another
        purpose's."""
        if not sealed:
            return None
        try:
            value = json.loads(self._fernet.decrypt(sealed.encode(), ttl=max_age_s))
        except (InvalidToken, ValueError):
            return None
        if not isinstance(value, dict) or value.pop("purpose", None) != purpose:
            return None
        return value
