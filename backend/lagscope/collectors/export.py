"""Snapshots as plain JSON-ready data (for ``lagscope probe`` and, later, the API).

Whatever a snapshot holds comes out as JSON's own types: a probe that prints half a snapshot
and a traceback helps nobody. Fields declared ``compare=False`` are the snapshot's working
state (parsed GTID texts kept for the tick), not something read from the server, and are left
out.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Set
from datetime import date, datetime, time, timedelta
from decimal import Decimal
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
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.compare
        }
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return str(value)  # exact: a float would round a 64-bit counter
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Set):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return str(value)
