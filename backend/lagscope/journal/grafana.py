"""Grafana's annotation body as a Lagscope note, so deploy tools that already post to Grafana's
``POST /api/annotations`` can post the same body here (docs/api.md).

Grafana's body has no cluster. The cluster comes from the request (``?cluster=NAME`` or an id)
or from a tag ``cluster:NAME``; a tag ``instance:NAME`` narrows the note to one server. Both
routing tags are taken out of the note's tags. ``time``/``timeEnd`` are epoch milliseconds
(Grafana's); no ``time`` means now, and a ``timeEnd`` equal to ``time`` (or 0) is a point.
Grafana's dashboard and panel fields mean nothing here and are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from lagscope.errors import InvalidInput
from lagscope.inventory.instances import cluster_by_name_or_id, instance_named
from lagscope.journal.annotations import create_annotation
from lagscope.models import Annotation

CLUSTER_TAG = "cluster:"
INSTANCE_TAG = "instance:"


@dataclass(frozen=True, slots=True)
class Routing:
    """Where a Grafana-shaped note goes, and the tags that are left for the note itself."""

    cluster: str | None
    instance: str | None
    tags: tuple[str, ...]


def routing(tags: Sequence[str], cluster: str | None) -> Routing:
    """The cluster (the request's, else the ``cluster:`` tag), the ``instance:`` tag, and the
    other tags. Two different ``cluster:`` tags, or one that contradicts the request, are an
    error: a note must not land on a cluster the sender did not mean."""
    clusters = {t.strip()[len(CLUSTER_TAG) :] for t in tags if t.strip().startswith(CLUSTER_TAG)}
    instances = {t.strip()[len(INSTANCE_TAG) :] for t in tags if t.strip().startswith(INSTANCE_TAG)}
    rest = tuple(
        t for t in tags if not t.strip().startswith((CLUSTER_TAG, INSTANCE_TAG)) and t.strip()
    )
    if len(clusters) > 1:
        raise InvalidInput(f"tags: more than one cluster tag: {sorted(clusters)}")
    if len(instances) > 1:
        raise InvalidInput(f"tags: more than one instance tag: {sorted(instances)}")
    tagged = next(iter(clusters), None)
    if cluster is not None and tagged is not None and tagged != cluster:
        raise InvalidInput(f"cluster: the request says {cluster!r}, a tag says {tagged!r}")
    return Routing(cluster if cluster is not None else tagged, next(iter(instances), None), rest)


def _moment(epoch_ms: int, field: str) -> datetime:
    try:
        return datetime.fromtimestamp(epoch_ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        raise InvalidInput(f"{field}: not a time in epoch milliseconds: {epoch_ms}") from None


def create_from_grafana(
    session: Session,
    *,
    text: str,
    tags: Sequence[str],
    time_ms: int | None,
    time_end_ms: int | None,
    cluster: str | None,
    author: str,
    author_id: int | None,
    now: datetime | None = None,
) -> Annotation:
    """The note Grafana's ``POST /api/annotations`` body describes."""
    where = routing(tags, cluster)
    if where.cluster is None or not where.cluster.strip():
        raise InvalidInput(
            "cluster: say which cluster the note is for: ?cluster=NAME or a tag 'cluster:NAME'"
        )
    target = cluster_by_name_or_id(session, where.cluster)
    instance = instance_named(session, target, where.instance) if where.instance else None
    starts_at = _moment(time_ms, "time") if time_ms else (now or datetime.now(UTC))
    ends_at = None
    if time_end_ms and time_end_ms != time_ms:
        ends_at = _moment(time_end_ms, "timeEnd")
    return create_annotation(
        session,
        target.id,
        author,
        starts_at,
        text,
        ends_at,
        where.tags,
        instance.id if instance is not None else None,
        author_id=author_id,
    )
