"""Annotations: request and response shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    computed_field,
    field_validator,
)

from lagscope.api.schemas.common import ObjectId, Schema, multiline_text, printable
from lagscope.api.schemas.window import Moment
from lagscope.journal.annotations import MAX_TAG, MAX_TAGS, MAX_TEXT
from lagscope.models import Annotation

Text = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TEXT),
    AfterValidator(multiline_text),
]
Tag = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TAG),
    AfterValidator(printable),
]
Tags = Annotated[list[Tag], Field(max_length=MAX_TAGS)]


class AnnotationIn(Schema):
    """A note at ``starts_at`` (or over ``[starts_at, ends_at)``), on the whole cluster, one
    instance, or one channel (its instance is then implied)."""

    cluster_id: ObjectId
    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    starts_at: Moment
    ends_at: Moment | None = None
    text: Text
    tags: Tags = Field(default_factory=list)


class AnnotationPatch(Schema):
    """Fields left out keep their value. ``instance_id`` and ``channel_id`` are the scope as a
    pair: sending either replaces it (the other counts as null; both null = the whole cluster).
    ``ends_at: null`` turns a range into a point."""

    instance_id: ObjectId | None = None
    channel_id: ObjectId | None = None
    starts_at: Moment | None = None
    ends_at: Moment | None = None
    text: Text | None = None
    tags: Tags | None = None

    @field_validator("starts_at", "text", "tags", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("may not be null: omit the field to keep its value")
        return value


class AnnotationOut(Schema):
    id: int
    cluster_id: int
    instance_id: int | None
    channel_id: int | None
    starts_at: datetime
    ends_at: datetime | None
    text: str
    tags: list[str]
    author: str = Field(description="the author's username when they wrote it")
    author_id: int | None = Field(
        description="the author's user id: they (and admins) may edit or delete the note; "
        "null once that user is deleted"
    )
    created_at: datetime
    # The last edit: who (a username, like ``author``) and when; null while never edited.
    updated_by: str | None
    updated_at: datetime | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def scope(self) -> Literal["cluster", "instance", "channel"]:
        if self.channel_id is not None:
            return "channel"
        return "cluster" if self.instance_id is None else "instance"


def annotation_out(annotation: Annotation) -> AnnotationOut:
    return AnnotationOut.model_validate(annotation)


class GrafanaAnnotationIn(BaseModel):
    """Grafana's annotation body (``POST /api/annotations``): ``time``/``timeEnd`` in epoch
    milliseconds. Its dashboard and panel fields are accepted and ignored, so a deploy tool's
    request needs no change but its URL."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    time: int | None = Field(default=None, ge=0)
    time_end: int | None = Field(default=None, alias="timeEnd", ge=0)
    text: Text
    # Checked as the note's tags once the routing tags (cluster:, instance:) are taken out.
    tags: list[Annotated[str, StringConstraints(max_length=255)]] = Field(
        default_factory=list, max_length=MAX_TAGS + 2
    )


class GrafanaAnnotationOut(BaseModel):
    """Grafana's answer to a created annotation."""

    message: str
    id: int
