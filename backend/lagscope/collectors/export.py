"""Snapshots as plain JSON-ready data (for ``lagscope probe`` and, later, the API)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lagscope.collectors.snapshot import InstanceSnapshot


def snapshot_to_dict(snapshot: InstanceSnapshot) -> dict[str, Any]:
    data = _plain(snapshot)
    assert isinstance(data, dict)
    data["flavor"]["version"] = ".".join(map(str, snapshot.flavor.version))
    for channel, status in zip(data["channels"], snapshot.channels, strict=True):
        channel["io_running"] = status.io_running
    data["is_replica"] = snapshot.is_replica
    return data


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value
