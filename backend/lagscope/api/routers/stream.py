"""Routes: Server-Sent Events of new samples for live charts.

Every second the stream sends the cluster's samples stored since the last it sent (event
``sample``, id = the newest sent sample time in epoch µs, so a reconnecting browser's
``Last-Event-ID`` resumes where it stopped), and a comment every 15 s so proxies keep an idle
connection open. Each poll of the store is a short transaction of its own in the thread pool:
a stream lasts minutes and must neither block the event loop nor pin a pooled connection.

Each user may hold ``LAGSCOPE_STREAMS_PER_USER`` streams and the process
``LAGSCOPE_STREAMS_PER_PROCESS`` (api/stream_slots.py); the slot is given back when the
response ends, whichever way.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session, sessionmaker
from starlette.concurrency import run_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from lagscope.api.deps import get_principal
from lagscope.api.schemas.common import QueryId
from lagscope.api.schemas.status import SampleEventOut
from lagscope.api.stream_slots import StreamSlot, StreamSlots
from lagscope.errors import NotAuthenticated
from lagscope.history.status import FeedSample, SampleFeed, open_feed
from lagscope.models.types import from_micros, to_micros
from lagscope.security.users import Principal

router = APIRouter(tags=["stream"])

POLL_S = 1.0  # the default poll interval: a faster store poll would mostly find nothing
KEEPALIVE_S = 15.0
RETRY_MS = 2000  # the browser's reconnect delay after a dropped stream
# A resume further back than this starts here instead: a longer gap is a job for /series.
MAX_RESUME = timedelta(minutes=10)
MAX_EVENT_ID = to_micros(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC))

_bearer = HTTPBearer(auto_error=False, description="An API token or a login token")


def stream_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller, checked in a transaction of its own: the request's session dependency would
    stay open (holding a pooled connection) until the stream ends."""
    with request.app.state.sessions() as session, session.begin():
        return get_principal(request, session, credentials)


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": SampleEventOut.model_json_schema()}},
            "description": "event: sample, data: one SampleEventOut as JSON",
        }
    },
)
async def stream_samples(
    request: Request,
    cluster_id: QueryId,
    principal: Annotated[Principal, Depends(stream_principal)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    last_event_id: Annotated[int | None, Header(ge=0, le=MAX_EVENT_ID)] = None,
) -> StreamingResponse:
    sessions: sessionmaker[Session] = request.app.state.sessions
    after = None
    if last_event_id is not None:
        now = datetime.now(UTC)
        after = min(max(from_micros(last_event_id), now - MAX_RESUME), now)
    # Opened before the response starts, so an unknown cluster is a plain 404 problem.
    feed = await run_in_threadpool(_open, sessions, cluster_id, after)
    slots: StreamSlots = request.app.state.stream_slots
    # The demo's callers have no account: they share one holder.
    slot = slots.acquire(str(principal.user_id) if principal.user_id else principal.username)
    return _SlotStreamingResponse(
        slot,
        _events(request, sessions, feed, credentials),
        media_type="text/event-stream",
        # no-transform and X-Accel-Buffering: proxies (nginx) must not buffer or gzip events.
        headers={"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"},
    )


class _SlotStreamingResponse(StreamingResponse):
    """Gives its stream slot back when the response ends, however it ends: the events'
    generator's own ``finally`` would not run if it were never started."""

    def __init__(self, slot: StreamSlot, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.release()


async def _events(
    request: Request,
    sessions: sessionmaker[Session],
    feed: SampleFeed,
    credentials: HTTPAuthorizationCredentials | None,
) -> AsyncIterator[str]:
    yield f"retry: {RETRY_MS}\n\n"  # also sends the headers now: the client sees the stream open
    last_id = feed.cursor
    quiet_since = checked_at = time.monotonic()
    recheck_s: float = request.app.state.settings.stream_recheck_s
    while not await request.is_disconnected():
        if time.monotonic() - checked_at >= recheck_s:
            # A stream lasts as long as the browser tab: a revoked token, a logout or a
            # disabled user must end it, not only the next request.
            try:
                await run_in_threadpool(stream_principal, request, credentials)
            except NotAuthenticated as exc:
                yield f"event: revoked\ndata: {json.dumps({'detail': str(exc)})}\n\n"
                return
            checked_at = time.monotonic()
        samples = await run_in_threadpool(_poll, sessions, feed)
        if samples:
            chunks = []
            for sample in samples:
                # Ids never go back, even for a late-committed older sample: a resume restarts
                # after the newest sent, and the feed's look-back covers the rest.
                last_id = max(last_id, sample.ts)
                chunks.append(_event(sample, last_id))
            yield "".join(chunks)
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= KEEPALIVE_S:
            yield ": keepalive\n\n"
            quiet_since = time.monotonic()
        if not feed.more:  # after a full batch, read on at once: a resume is catching up
            await anyio.sleep(POLL_S)


def _event(sample: FeedSample, event_id: datetime) -> str:
    data = {
        "channel_id": sample.channel_id,
        "ts": to_micros(sample.ts) // 1000,
        "lag_s": sample.lag_s,
        "lag_source": sample.lag_source,
        "verdict": sample.verdict,
        "not_received": sample.not_received,
        "received_not_applied": sample.received_not_applied,
    }
    body = json.dumps(data, separators=(",", ":"))
    return f"id: {to_micros(event_id)}\nevent: sample\ndata: {body}\n\n"


def _open(sessions: sessionmaker[Session], cluster_id: int, after: datetime | None) -> SampleFeed:
    with sessions() as session, session.begin():
        return open_feed(session, cluster_id, after)


def _poll(sessions: sessionmaker[Session], feed: SampleFeed) -> list[FeedSample]:
    with sessions() as session, session.begin():
        return feed.poll(session)
