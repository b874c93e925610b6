"""Stored credentials: scrypt with the store's salt, old keys for reading, the legacy derivation."""

from __future__ import annotations

import base64
import hashlib

import pytest
from cryptography.fernet import Fernet, InvalidToken

from lagscope.config import Settings
from lagscope.errors import CredentialsUnreadable
from lagscope.models import Base
from lagscope.security.key_rotation import ENCRYPTED_COLUMNS
from lagscope.security.secret_box import KDF, SecretBox

NEW = "new-key-9f3c1a7e5b2d4068-Kp2Lq8Zx0Ws"
OLD = "old-key-1b2c3d4e5f607182-Mn4Rt6Yu8Io"
SALT = b"0123456789abcdef"


def legacy_token(key: str, plain: str) -> str:
    """What Lagscope wrote before the salted KDF: Fernet under SHA-256(key)."""
    fernet = Fernet(base64.urlsafe_b64encode(hashlib.sha256(key.encode()).digest()))
    return fernet.encrypt(plain.encode()).decode()


def test_round_trip_and_the_key_is_not_the_old_plain_hash():
    box = SecretBox(NEW, SALT)
    token = box.encrypt("s3cret")
    assert token != "s3cret" and "s3cret" not in token
    assert box.decrypt(token) == "s3cret"
    assert box.key_used(token) == 0
    legacy = Fernet(base64.urlsafe_b64encode(hashlib.sha256(NEW.encode()).digest()))
    with pytest.raises(InvalidToken):
        legacy.decrypt(token.encode())  # a real KDF, not SHA-256 of the key


def test_the_salt_is_part_of_the_key():
    token = SecretBox(NEW, SALT).encrypt("pw")
    with pytest.raises(CredentialsUnreadable, match="LAGSCOPE_OLD_SECRET_KEYS"):
        SecretBox(NEW, b"another-salt-xyz").decrypt(token)


def test_values_written_before_the_kdf_still_decrypt():
    token = legacy_token(NEW, "from-before")
    box = SecretBox(NEW, SALT)
    assert box.decrypt(token) == "from-before"
    assert box.key_labels[box.key_used(token) or 0] == "current key (legacy SHA-256)"


def test_old_keys_decrypt_but_never_encrypt():
    old_token = SecretBox(OLD, SALT).encrypt("pw-old")
    legacy_old = legacy_token(OLD, "pw-legacy-old")
    rotating = SecretBox(NEW, SALT, [OLD])
    assert rotating.decrypt(old_token) == "pw-old"
    assert rotating.decrypt(legacy_old) == "pw-legacy-old"
    assert rotating.key_labels[rotating.key_used(old_token) or 0] == "old key 1"
    assert rotating.key_labels[rotating.key_used(legacy_old) or 0] == "old key 1 (legacy SHA-256)"
    fresh = rotating.encrypt("pw-new")
    assert SecretBox(NEW, SALT).decrypt(fresh) == "pw-new"
    with pytest.raises(CredentialsUnreadable):
        SecretBox(OLD, SALT).decrypt(fresh)
    with pytest.raises(CredentialsUnreadable):
        SecretBox(NEW, SALT).decrypt(old_token)  # the old key dropped: unreadable
    assert SecretBox(NEW, SALT).key_used(old_token) is None


def test_the_salt_is_loaded_on_first_use_only():
    calls = []

    def load() -> tuple[str, bytes]:
        calls.append(1)
        return KDF, SALT

    box = SecretBox(NEW, load)
    assert calls == []  # building an API or a worker reads nothing from the store
    token = box.encrypt("x")
    box.decrypt(box.encrypt("y"))
    assert calls == [1]
    assert SecretBox(NEW, SALT).decrypt(token) == "x"


def test_an_unknown_kdf_is_refused():
    box = SecretBox(NEW, lambda: ("argon9:n=1", SALT))
    with pytest.raises(Exception, match="argon9"):
        box.encrypt("x")


def test_old_keys_setting_is_comma_separated():
    settings = Settings(secret_key=NEW, old_secret_keys=f" {OLD} ,, other-old ,")
    assert settings.old_keys() == (OLD, "other-old")
    assert Settings(secret_key=NEW).old_keys() == ()


def test_rotation_knows_every_encrypted_column():
    """A model column named ``*_enc`` holds a SecretBox token: rotation must re-encrypt it."""
    listed = {(model.__tablename__, column) for model, column, _ in ENCRYPTED_COLUMNS}
    found = {
        (table.name, column.name)
        for table in Base.metadata.tables.values()
        for column in table.columns
        if column.name.endswith("_enc")
    }
    assert found == listed


def test_a_zero_login_back_off_is_refused():
    """0 would retry a refused login every tick: the lock-out the back-off exists to avoid."""
    with pytest.raises(ValueError, match="login_backoff_base_s"):
        Settings(secret_key=NEW, login_backoff_base_s=0)
