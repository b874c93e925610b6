"""Annotations: human notes on a cluster's timeline, at a time or over a range.

Scope is the whole cluster, one instance, or one channel; a channel-scoped note also records the
channel's instance, so "notes about replica1" finds it. The scope must lie in the note's cluster:
a note filed under one cluster but pointing into another would show on the wrong timeline.
The author (and the last editor) is whoever is signed in, never a field the caller fills in;
a note belongs to its author's account (``author_id``), the name is only shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from lagscope.analysis.server_text import clean_text
from lagscope.errors import InvalidInput, NotFound, PermissionDenied
from lagscope.history.window import EARLIEST, LATEST, require_window
from lagscope.inventory.instances import get_cluster, instance_in_cluster
from lagscope.models import Annotation, Channel, Cluster
from lagscope.security.users import Principal

MAX_TEXT = 2000
MAX_TAGS = 20
MAX_TAG = 32  # a tag is a label to filter on ("tuning", "incident"), not a sentence


def list_annotations(
    session: Session, cluster_id: int, start: datetime, end: datetime
) -> list[Annotation]:
    """Notes that overlap [start, end): a range counts while it lasts, a point at its time."""
    require_window(start, end)
    cluster = get_cluster(session, cluster_id)
    return list(
        session.scalars(
            select(Annotation)
            .where(
                Annotation.cluster_id == cluster.id,
                Annotation.starts_at < end,
                or_(
                    Annotation.ends_at >= start,
                    and_(Annotation.ends_at.is_(None), Annotation.starts_at >= start),
                ),
            )
            .order_by(Annotation.starts_at, Annotation.id)
        )
    )


def get_annotation(session: Session, annotation_id: int) -> Annotation:
    annotation = session.get(Annotation, annotation_id)
    if annotation is None:
        raise NotFound(f"annotation {annotation_id} does not exist")
    return annotation


def create_annotation(
    session: Session,
    cluster_id: int,
    author: str,
    starts_at: datetime,
    text: str,
    ends_at: datetime | None = None,
    tags: Sequence[str] = (),
    instance_id: int | None = None,
    channel_id: int | None = None,
    author_id: int | None = None,
) -> Annotation:
    """``author`` is the name shown; ``author_id`` the account that owns the note (none for
    the demo's notes: only admins change those)."""
    cluster = get_cluster(session, cluster_id)
    annotation = Annotation(
        cluster_id=cluster.id, author=author, author_id=author_id, created_at=datetime.now(UTC)
    )
    _set_scope(session, cluster, annotation, instance_id, channel_id)
    _set_times(annotation, starts_at, ends_at)
    annotation.text = _text(text)
    annotation.tags = _tags(tags)
    session.add(annotation)
    session.flush()
    return annotation


def update_annotation(
    session: Session, annotation: Annotation, changes: Mapping[str, Any], editor: str
) -> Annotation:
    """Apply the fields the caller sent and record ``editor`` as the last to edit it (even an
    empty PATCH: the request was an edit by that user). ``instance_id`` and ``channel_id`` are
    the scope as a pair: sending either replaces the scope, and the one left out counts as
    null."""
    if "instance_id" in changes or "channel_id" in changes:
        cluster = get_cluster(session, annotation.cluster_id)
        _set_scope(
            session, cluster, annotation, changes.get("instance_id"), changes.get("channel_id")
        )
    if "starts_at" in changes or "ends_at" in changes:
        _set_times(
            annotation,
            changes.get("starts_at") or annotation.starts_at,
            changes.get("ends_at", annotation.ends_at),
        )
    if "text" in changes:
        annotation.text = _text(changes["text"])
    if "tags" in changes:
        annotation.tags = _tags(changes["tags"] or ())
    annotation.updated_by, annotation.updated_at = editor, datetime.now(UTC)
    session.flush()
    return annotation


def require_author_or_admin(principal: Principal, annotation: Annotation) -> None:
    """An editor may change or delete only their own notes: the journal is a record of who
    said what, so another editor must not rewrite or erase it. Admins may (moderation).
    Own means the same account, not the same name: a user created later under a deleted
    author's name, in any case, is someone else."""
    if principal.can("admin"):
        return
    if annotation.author_id is not None and annotation.author_id == principal.user_id:
        return
    raise PermissionDenied(
        f"only the author ({annotation.author}) or an admin may change this annotation"
    )


def delete_annotation(session: Session, annotation: Annotation) -> None:
    session.delete(annotation)
    session.flush()


def _set_scope(
    session: Session,
    cluster: Cluster,
    annotation: Annotation,
    instance_id: int | None,
    channel_id: int | None,
) -> None:
    if channel_id is not None:
        channel = session.get(Channel, channel_id)
        if channel is None:
            raise NotFound(f"channel {channel_id} does not exist")
        if channel.instance.cluster_id != cluster.id:
            raise InvalidInput(f"channel_id: channel {channel_id} is not in cluster {cluster.id}")
        if instance_id is not None and instance_id != channel.instance_id:
            raise InvalidInput(f"channel_id: channel {channel_id} is not on instance {instance_id}")
        instance_id = channel.instance_id
    if instance_id is not None:
        instance_in_cluster(session, cluster, instance_id)
    annotation.instance_id, annotation.channel_id = instance_id, channel_id


def _set_times(annotation: Annotation, starts_at: datetime, ends_at: datetime | None) -> None:
    # No cap on a range's length, unlike a query window: "on the new hardware since …" may last.
    for name, moment in (("starts_at", starts_at), ("ends_at", ends_at)):
        if moment is not None and (moment.tzinfo is None or not EARLIEST <= moment < LATEST):
            raise InvalidInput(f"{name}: must have a UTC offset and lie between 1970 and 9000")
    if ends_at is not None and ends_at <= starts_at:
        raise InvalidInput("ends_at: must be after starts_at (or null for a point in time)")
    annotation.starts_at = starts_at.astimezone(UTC)
    annotation.ends_at = None if ends_at is None else ends_at.astimezone(UTC)


def _text(text: str) -> str:
    # Lines and tabs are kept (a note may be a paragraph); NUL (which PostgreSQL refuses),
    # other controls and bidi controls are made visible.
    text = clean_text(text, multiline=True).strip()
    if not 1 <= len(text) <= MAX_TEXT:
        raise InvalidInput(f"text: must have 1 to {MAX_TEXT} characters")
    return text


def _tags(tags: Sequence[str]) -> list[str]:
    cleaned = list(dict.fromkeys(t.strip() for t in tags))  # keep order, drop repeats
    if len(cleaned) > MAX_TAGS:
        raise InvalidInput(f"tags: at most {MAX_TAGS} tags")
    if any(not 1 <= len(t) <= MAX_TAG for t in cleaned):
        raise InvalidInput(f"tags: each tag must have 1 to {MAX_TAG} characters")
    return cleaned
