"""The incidents by name, for the lab's CLI and the demo: :data:`INCIDENTS` and :func:`incident`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from lagscope.errors import InvalidInput
from lagscope.lab.incidents.applier_stops import broken, delayed, stopped
from lagscope.lab.incidents.big_tables import large_transaction, long_alter, no_primary_key
from lagscope.lab.incidents.clock import clock_offset
from lagscope.lab.incidents.common import Incident
from lagscope.lab.incidents.locks import metadata_lock, row_lock
from lagscope.lab.incidents.network import network_bound
from lagscope.lab.incidents.throughput import durable_apply, relay_log_durability, serial_apply
from lagscope.lab.topology import Lab

IncidentMaker = Callable[..., contextlib.AbstractContextManager[Incident]]

INCIDENTS: dict[str, IncidentMaker] = {
    "large_transaction": large_transaction,
    "long_alter": long_alter,
    "metadata_lock": metadata_lock,
    "row_lock": row_lock,
    "no_primary_key": no_primary_key,
    "serial_apply": serial_apply,
    "relay_log_durability": relay_log_durability,
    "durable_apply": durable_apply,
    "delayed": delayed,
    "stopped": stopped,
    "broken": broken,
    "network_bound": network_bound,
    "clock_offset": clock_offset,
}


def incident(lab: Lab, name: str, **options: Any) -> contextlib.AbstractContextManager[Incident]:
    """The incident ``name`` (a key of :data:`INCIDENTS`) on ``lab`` with ``options``."""
    try:
        maker = INCIDENTS[name]
    except KeyError:
        raise InvalidInput(f"no incident {name!r}; known: {sorted(INCIDENTS)}") from None
    return maker(lab, **options)
