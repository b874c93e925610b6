"""Credentials at rest: Fernet (AES-128-CBC + HMAC-SHA256) under keys from the settings.

Key derivation: ``scrypt(LAGSCOPE_SECRET_KEY, salt)`` with the random salt kept in the store
(table ``secret_key_salt``, one row, made by migration 7a2e0c5e0006 or on first use). scrypt,
not one hash: the key is usually high-entropy (weak ones are refused), but an operator's
passphrase that slips past the strength estimate should still cost an attacker with a stolen
store ~16 MiB and tens of milliseconds per guess, and the salt stops one precomputation serving
every deployment. Derived once per process and key (lazily: constructing a box reads nothing).

Rotation: LAGSCOPE_OLD_SECRET_KEYS (comma-separated) are tried after the current key, for
decrypting only (MultiFernet, new key first); ``lagscope secrets rotate`` re-encrypts every
stored credential under the current key (security/key_rotation.py).

Legacy: values written before 7a2e0c5e0006 were encrypted under ``SHA-256(key)`` (no salt, one
fast hash). Those derivations stay in the decrypt list, last, and are never used to encrypt, so
an upgraded store keeps working until it is rotated.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from lagscope.errors import CredentialsUnreadable, InvalidInput
from lagscope.models import SecretKeySalt

# scrypt cost: n=2^14, r=8 → 16 MiB and ~0.1–0.5 s here, once per process and key. Named in
# the salt row, so a later change of cost keeps reading what was written under this one.
KDF = "scrypt:n=16384,r=8,p=1"
_KDFS = {KDF: (16384, 8, 1)}
SALT_ROW_ID = 1

SaltSource = bytes | Callable[[], tuple[str, bytes]]


@lru_cache(maxsize=32)
def _derived_key(secret_key: str, kdf: str, salt: bytes) -> bytes:
    try:
        n, r, p = _KDFS[kdf]
    except KeyError:
        raise InvalidInput(f"the store's key derivation {kdf!r} is unknown here") from None
    raw = hashlib.scrypt(secret_key.encode(), salt=salt, n=n, r=r, p=p, maxmem=64 << 20, dklen=32)
    return base64.urlsafe_b64encode(raw)


def _legacy_key(secret_key: str) -> bytes:
    """The derivation before 7a2e0c5e0006: decrypting old values only."""
    return base64.urlsafe_b64encode(hashlib.sha256(secret_key.encode()).digest())


class SecretBox:
    """Encrypts under the current key; decrypts under it, the old keys, then the legacy ones.

    ``salt`` is the store's salt (bytes, with :data:`KDF`) or a loader returning ``(kdf,
    salt)``, called on first use (:func:`store_salt`), so an API or worker can be built before
    it touches the store.
    """

    def __init__(self, secret_key: str, salt: SaltSource, old_keys: Sequence[str] = ()) -> None:
        self._keys = (secret_key, *dict.fromkeys(k for k in old_keys if k and k != secret_key))
        self._salt = salt
        self._lock = threading.Lock()
        self._fernets: list[Fernet] | None = None
        self._multi: MultiFernet | None = None
        self._plain: dict[str, str] = {}

    @property
    def key_labels(self) -> list[str]:
        """What each decrypting key is, in the order tried (for rotation reports)."""
        olds = [f"old key {i}" for i in range(1, len(self._keys))]
        legacy = [f"{k} (legacy SHA-256)" for k in ("current key", *olds)]
        return ["current key", *olds, *legacy]

    def _ensure(self) -> tuple[list[Fernet], MultiFernet]:
        with self._lock:
            if self._fernets is None or self._multi is None:
                kdf, salt = (KDF, self._salt) if isinstance(self._salt, bytes) else self._salt()
                derived = [Fernet(_derived_key(k, kdf, salt)) for k in self._keys]
                self._fernets = derived + [Fernet(_legacy_key(k)) for k in self._keys]
                self._multi = MultiFernet(self._fernets)
            return self._fernets, self._multi

    def encrypt(self, plaintext: str) -> str:
        return self._ensure()[1].encrypt(plaintext.encode()).decode()

    def decrypt(self, token: str) -> str:
        if not token:
            return ""
        # Every poll tick turns the same stored tokens into connection specs: remember them.
        cached = self._plain.get(token)
        if cached is not None:
            return cached
        try:
            plain = self._ensure()[1].decrypt(token.encode()).decode()
        except InvalidToken as exc:
            raise CredentialsUnreadable(
                "the stored credential cannot be decrypted with LAGSCOPE_SECRET_KEY or any of "
                "LAGSCOPE_OLD_SECRET_KEYS (was the key changed without keeping the old one "
                "there?); enter the password again"
            ) from exc
        if len(self._plain) > 10_000:
            self._plain.clear()
        self._plain[token] = plain
        return plain

    def key_used(self, token: str) -> int | None:
        """Index into :attr:`key_labels` of the key that decrypts ``token``; None: no key."""
        for index, fernet in enumerate(self._ensure()[0]):
            try:
                fernet.decrypt(token.encode())
            except InvalidToken:
                continue
            return index
        return None


def ensure_salt(session: Session) -> tuple[str, bytes]:
    """The store's ``(kdf, salt)``, making the row when missing (a store the migration did not
    make it in). Flushes in the caller's transaction; two processes racing both try the same
    primary key, and :func:`store_salt` re-reads after the loser's IntegrityError."""
    row = session.get(SecretKeySalt, SALT_ROW_ID)
    if row is None:
        row = SecretKeySalt(
            id=SALT_ROW_ID,
            kdf=KDF,
            salt=base64.urlsafe_b64encode(os.urandom(16)).decode(),
            created_at=datetime.now(UTC),
        )
        session.add(row)
        session.flush()
    return row.kdf, base64.urlsafe_b64decode(row.salt)


def store_salt(sessions: sessionmaker[Session]) -> Callable[[], tuple[str, bytes]]:
    """A salt loader over the store, for :class:`SecretBox` (one short transaction)."""

    def load() -> tuple[str, bytes]:
        try:
            with sessions() as session, session.begin():
                return ensure_salt(session)
        except IntegrityError:
            with sessions() as session:  # another process made the row first: use theirs
                return ensure_salt(session)

    return load


def store_box(
    sessions: sessionmaker[Session], secret_key: str, old_keys: Sequence[str] = ()
) -> SecretBox:
    """The box every Lagscope process uses: settings' keys, the store's salt."""
    return SecretBox(secret_key, store_salt(sessions), old_keys)
