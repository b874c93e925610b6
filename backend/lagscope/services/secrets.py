"""Credentials at rest: Fernet (AES-128-CBC + HMAC-SHA256) under a key from LAGSCOPE_SECRET_KEY.

The settings key is any string; it is stretched to a Fernet key with SHA-256 so operators can
use a passphrase. Rotating the key makes stored passwords unreadable: the error says so.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from lagscope.errors import InvalidInput


class SecretBox:
    def __init__(self, secret_key: str) -> None:
        digest = hashlib.sha256(secret_key.encode()).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))
        self._plain: dict[str, str] = {}

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        if not token:
            return ""
        # Every poll tick turns the same stored tokens into connection specs: remember them.
        cached = self._plain.get(token)
        if cached is not None:
            return cached
        try:
            plain = self._fernet.decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise InvalidInput(
                "a stored credential cannot be decrypted: was LAGSCOPE_SECRET_KEY changed?"
            ) from exc
        if len(self._plain) > 10_000:
            self._plain.clear()
        self._plain[token] = plain
        return plain
