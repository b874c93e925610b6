"""The audit trail: who changed what, when and from where."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from lagscope.api.schemas.common import Schema


class AuditEventOut(Schema):
    id: int
    at: datetime
    actor: str = Field(description='A username, "demo", or "cli:<os user>" for the CLI.')
    source: str = Field(description='The client\'s address, or "cli@<host>".')
    via: str = Field(description='The request ("PATCH /api/v1/instances/3") or CLI command.')
    action: Literal["create", "update", "delete"]
    kind: str = Field(description="What was changed: cluster, instance, alert_rule, user, …")
    object_id: int | None
    object_name: str
    changes: dict[str, Any] = Field(
        description=(
            "{field: [before, after]}; a secret (a password, a token, a webhook secret) only as"
            ' "set", "replaced" or "cleared", never its value; a webhook URL by its origin.'
        )
    )


class AuditEventsOut(Schema):
    events: list[AuditEventOut]
    next_before_id: int | None = Field(
        description="Ask again with before_id set to this for the next (older) page."
    )
