"""Shared schema pieces: constrained names and the base model config."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)]
VariableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,64}$")]
Host = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
Port = Annotated[int, Field(ge=1, le=65535)]
Password = Annotated[str, StringConstraints(max_length=1024)]


class Schema(BaseModel):
    model_config = ConfigDict(extra="forbid", from_attributes=True)
