"""Shared schema pieces: constrained names and the base model config."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from lagscope.analysis.server_text import clean_text

# Bidirectional overrides and isolates reorder what a reader sees ("trojan source" names).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """Refuse control characters (NUL, tabs, newlines, DEL, C1) and bidi overrides: a name is
    shown in tables, logs and alert payloads, where they hide or forge text."""
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cs") or char in _BIDI_CONTROLS:
            raise ValueError(f"may not contain control characters (found U+{ord(char):04X})")
    return text


def multiline_text(text: str) -> str:
    """Free text (a note): lines and tabs kept, NUL and other controls and bidi controls made
    visible (analysis/server_text.py), never refused: a pasted log line must not cost the note."""
    cleaned = clean_text(text, multiline=True).strip()
    if not cleaned:
        raise ValueError("may not be empty")
    return cleaned


# The calendar the store can hold: a time outside it is the caller's error (422), and keeping
# a margin below year 9999 and above year 1 means a default window or a UTC offset applied to
# it cannot overflow datetime (which used to be a 500).
MIN_YEAR, MAX_YEAR = 1970, 9000


def within_calendar(moment: datetime | None) -> datetime | None:
    if moment is not None and not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise ValueError(f"must fall between the years {MIN_YEAR} and {MAX_YEAR}")
    return moment


Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=128),
    AfterValidator(printable),
]
VariableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,64}$")]
# A host and a region are shown and logged like names: the same characters are refused.
Host = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=255),
    AfterValidator(printable),
]
Region = Annotated[str, StringConstraints(max_length=64), AfterValidator(printable)]
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
