"""Webhook targets as the API edits them: the URL must pass the destination allow-list, and a
secret goes in encrypted and never comes out (``has_secret`` only). Deleting a target takes it
out of every rule that sent to it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.alerts.delivery_policy import WebhookUrlError, validate_webhook_url
from lagscope.errors import Conflict, InvalidInput, NotFound
from lagscope.models import (
    AlertRule,
    WebhookTarget,
)
from lagscope.security.secret_box import SecretBox


def _now() -> datetime:
    return datetime.now(UTC)


def get_target(session: Session, target_id: int) -> WebhookTarget:
    target = session.get(WebhookTarget, target_id)
    if target is None:
        raise NotFound(f"webhook target {target_id} does not exist")
    return target


def list_targets(session: Session) -> list[WebhookTarget]:
    return list(session.scalars(select(WebhookTarget).order_by(WebhookTarget.name)))


def _url(url: str, allow: Sequence[str]) -> str:
    try:
        return validate_webhook_url(url, allow)
    except WebhookUrlError as exc:
        raise InvalidInput(str(exc)) from exc


def create_target(
    session: Session,
    box: SecretBox,
    allow: Sequence[str],
    name: str,
    kind: str,
    url: str,
    secret: str | None,
    enabled: bool = True,
    include_statements: bool = False,
) -> WebhookTarget:
    if session.scalar(select(WebhookTarget.id).where(WebhookTarget.name == name)) is not None:
        raise Conflict(f"a webhook target named {name!r} exists already")
    target = WebhookTarget(
        name=name,
        kind=kind,
        url=_url(url, allow),
        secret_enc=box.encrypt(secret) if secret else "",
        enabled=enabled,
        include_statements=include_statements,
        created_at=_now(),
    )
    session.add(target)
    session.flush()
    return target


def update_target(
    session: Session,
    box: SecretBox,
    allow: Sequence[str],
    target: WebhookTarget,
    changes: Mapping[str, Any],
) -> WebhookTarget:
    """``secret``: a new one replaces it, an empty string removes it; omitted keeps it."""
    if "name" in changes and changes["name"] != target.name:
        clash = session.scalar(
            select(WebhookTarget.id).where(WebhookTarget.name == changes["name"])
        )
        if clash is not None:
            raise Conflict(f"a webhook target named {changes['name']!r} exists already")
        target.name = changes["name"]
    if "url" in changes:
        url = _url(changes["url"], allow)
        if url != target.url and target.secret_enc and "secret" not in changes:
            # Signed deliveries to a new URL would hand its owner signatures the old receiver
            # accepts (over bodies an editor shapes): the secret stays with its receiver.
            raise InvalidInput(
                "changing the url of a signed target needs the secret again in the same "
                "request (the stored one only signs for the url it was entered for); give "
                '"secret": "" to send unsigned'
            )
        target.url = url
    if "kind" in changes:
        target.kind = changes["kind"]
    if "enabled" in changes:
        target.enabled = changes["enabled"]
    if "include_statements" in changes:
        target.include_statements = changes["include_statements"]
    if "secret" in changes:
        target.secret_enc = box.encrypt(changes["secret"]) if changes["secret"] else ""
    session.flush()
    return target


def delete_target(session: Session, target: WebhookTarget) -> None:
    for rule in session.scalars(select(AlertRule)):
        if target.id in (rule.target_ids or []):
            rule.target_ids = [t for t in rule.target_ids if t != target.id]
    session.delete(target)
    session.flush()
