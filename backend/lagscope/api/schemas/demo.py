"""The demo's webhook inbox: response shapes (demo mode only)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from lagscope.api.demo_inbox import InboxEntry, SignatureCheck
from lagscope.api.schemas.common import Schema


class InboxEntryOut(Schema):
    id: int
    received_at: datetime
    last_received_at: datetime
    times_received: int = Field(
        description="deliveries with this Idempotency-Key and body (retries are at least once)"
    )
    headers: dict[str, str] = Field(
        description="Idempotency-Key, the signature and its timestamp, the delivery id, "
        "Content-Type and User-Agent, as received (each at most 500 characters)"
    )
    payload: Any = Field(description="the JSON body as received; show it as text")
    signature: SignatureCheck = Field(
        description="checked with the secret of the webhook targets aimed at this inbox"
    )


class InboxOut(Schema):
    entries: list[InboxEntryOut] = Field(description="newest first")
    capacity: int = Field(description="the inbox keeps this many, the newest")


class InboxReceipt(Schema):
    id: int
    times_received: int


def inbox_entry_out(entry: InboxEntry) -> InboxEntryOut:
    return InboxEntryOut(
        id=entry.id,
        received_at=entry.received_at,
        last_received_at=entry.last_received_at,
        times_received=entry.times_received,
        headers=dict(entry.headers),
        payload=entry.payload,
        signature=entry.signature,
    )
