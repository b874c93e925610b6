"""``lagscope secrets rotate``: re-encrypt every stored credential under the current key.

All or nothing, in the caller's transaction: every value is first decrypted (with the current
key, LAGSCOPE_OLD_SECRET_KEYS, or the legacy derivation); if any cannot be, nothing changes and
the error names each one. Otherwise each is encrypted again under the current key, after which
the old keys can be dropped from the settings.

:data:`ENCRYPTED_COLUMNS` lists every column that holds a :class:`SecretBox` token. A unit test
fails when a model gains an ``*_enc`` column missing here, so no credential is left behind.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.errors import CredentialsUnreadable
from lagscope.models import Cluster, Instance, WebhookTarget
from lagscope.models.base import Base
from lagscope.security.secret_box import SecretBox

# (model, column, what it is): what rotation re-encrypts.
ENCRYPTED_COLUMNS: tuple[tuple[type[Base], str, str], ...] = (
    (Instance, "password_enc", "instance_passwords"),
    (Cluster, "heartbeat_password_enc", "heartbeat_passwords"),
    (WebhookTarget, "secret_enc", "webhook_secrets"),
)


@dataclass(slots=True)
class RotationReport:
    """Values re-encrypted per kind, and which key each was readable with before."""

    rotated: Counter[str] = field(default_factory=Counter)
    decrypted_with: Counter[str] = field(default_factory=Counter)
    dry_run: bool = False


class RotationRefused(CredentialsUnreadable):
    """Some stored values decrypt with no key; ``unreadable`` names each."""

    def __init__(self, unreadable: list[str]) -> None:
        self.unreadable = unreadable
        super().__init__(
            f"{len(unreadable)} stored credential(s) decrypt with neither LAGSCOPE_SECRET_KEY nor "
            f"any of LAGSCOPE_OLD_SECRET_KEYS: {'; '.join(unreadable)}. Nothing was changed. "
            "Add the key they were written with to LAGSCOPE_OLD_SECRET_KEYS, or enter those "
            "passwords again, then rotate"
        )


def rotate_credentials(session: Session, box: SecretBox, dry_run: bool = False) -> RotationReport:
    labels = box.key_labels
    report = RotationReport(dry_run=dry_run)
    readable: list[tuple[Base, str, str]] = []
    unreadable: list[str] = []
    for model, column, kind in ENCRYPTED_COLUMNS:
        for row in session.scalars(select(model).order_by(model.id)):  # type: ignore[attr-defined]
            token = getattr(row, column)
            if not token:
                continue
            index = box.key_used(token)
            if index is None:
                unreadable.append(_describe(row))
                continue
            report.decrypted_with[labels[index]] += 1
            readable.append((row, column, kind))
    if unreadable:
        raise RotationRefused(unreadable)
    for row, column, kind in readable:
        if not dry_run:
            setattr(row, column, box.encrypt(box.decrypt(getattr(row, column))))
        report.rotated[kind] += 1
    session.flush()
    return report


def _describe(row: Base) -> str:
    if isinstance(row, Instance):
        return f"instance {row.id} ({row.cluster.name}/{row.name}) password"
    if isinstance(row, Cluster):
        return f"cluster {row.id} ({row.name}) heartbeat password"
    if isinstance(row, WebhookTarget):
        return f"webhook {row.id} ({row.name}) signing secret"
    return f"{type(row).__name__} {getattr(row, 'id', '?')}"
