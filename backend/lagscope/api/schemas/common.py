"""Shared schema pieces: constrained names and the base model config."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
VariableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,64}$")]
Host = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
Port = Annotated[int, Field(ge=1, le=65535)]
Password = Annotated[str, StringConstraints(max_length=1024)]
# Ids are 32-bit integers in PostgreSQL and MySQL: anything outside is a 422, not a driver error.
MAX_ID = 2**31 - 1
ObjectId = Annotated[int, Field(ge=1, le=MAX_ID)]
PathId = Annotated[int, Path(ge=1, le=MAX_ID)]
QueryId = Annotated[int, Query(ge=1, le=MAX_ID)]


class Schema(BaseModel):
    model_config = ConfigDict(extra="forbid", from_attributes=True)


class PatchSchema(Schema):
    """A partial update: omitted fields stay as they are; an explicit null is refused (the
    fields it covers cannot be null), with the field named in the 422."""

    @field_validator("*", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("may not be null: omit the field to keep its value")
        return value
