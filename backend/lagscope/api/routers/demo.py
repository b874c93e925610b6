"""Routes: the demo's webhook inbox (demo mode only; 404 otherwise, see ``api/demo_inbox.py``).

The demo's default alert rule sends to a webhook target aimed here, and Lagscope's own delivery
code posts to it over loopback like to any receiver; the UI's Inbox page lists what arrived.
"""

from __future__ import annotations

import json
import time
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Request
from sqlalchemy import select

from lagscope.api.demo_inbox import INBOX_PATH, MAX_BODY_BYTES, DemoInbox, signature_check
from lagscope.api.deps import BoxDep, PrincipalDep, SessionDep
from lagscope.api.schemas.demo import InboxOut, InboxReceipt, inbox_entry_out
from lagscope.errors import CredentialsUnreadable, InvalidInput, NotFound
from lagscope.models import WebhookTarget

router = APIRouter(tags=["demo"])
PATH = INBOX_PATH.removeprefix("/api/v1")


def demo_inbox(request: Request) -> DemoInbox:
    inbox: DemoInbox | None = request.app.state.demo_inbox
    if inbox is None:
        raise NotFound("the webhook inbox exists in demo mode only (`lagscope demo`)")
    return inbox


async def json_body(request: Request) -> bytes:
    # A JSON content type also keeps a cross-site form from posting here: a browser sends
    # application/json cross-origin only after a CORS preflight, which this API never grants.
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPException(415, "the inbox takes application/json bodies (an alert webhook)")
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise HTTPException(413, f"the inbox keeps bodies up to {MAX_BODY_BYTES} bytes")
    return body


InboxDep = Annotated[DemoInbox, Depends(demo_inbox)]


@router.get(PATH, response_model=InboxOut)
def list_inbox(_: PrincipalDep, inbox: InboxDep) -> InboxOut:
    """What the demo's webhook inbox received, newest first (demo mode only)."""
    return InboxOut(entries=[inbox_entry_out(e) for e in inbox.entries()], capacity=inbox.capacity)


@router.post(
    PATH,
    response_model=InboxReceipt,
    status_code=202,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    },
)
def receive_inbox(
    request: Request,
    _: PrincipalDep,
    inbox: InboxDep,
    body: Annotated[bytes, Depends(json_body)],
    session: SessionDep,
    box: BoxDep,
) -> InboxReceipt:
    """A webhook receiver for the demo's alert rule (demo mode only): keeps the body and the
    headers a receiver looks at, and checks the signature as docs/alerts.md says a receiver
    should, with the secret of the targets aimed here."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"the body is not JSON: {exc}"[:500]) from None
    targets = session.scalars(
        select(WebhookTarget).where(WebhookTarget.url.endswith(INBOX_PATH))
    ).all()
    secrets = []
    for target in targets:
        if target.secret_enc:
            try:
                secrets.append(box.decrypt(target.secret_enc).encode())
            except CredentialsUnreadable:
                continue
    headers = dict(request.headers.items())
    entry = inbox.receive(headers, payload, signature_check(headers, body, secrets, time.time()))
    return InboxReceipt(id=entry.id, times_received=entry.times_received)
