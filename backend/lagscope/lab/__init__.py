"""A real local MariaDB GTID replication lab, and a latency proxy to put between its servers.

``Lab.start(LabConfig(replicas=2, proxied=("replica2",)))`` gives a source and two replicas on
free loopback ports in a few seconds; ``lagscope lab up|down|status|proxy`` drives the same from a
shell. See :mod:`lagscope.lab.topology`, :mod:`lagscope.lab.servers`, :mod:`lagscope.lab.proxy`
and :mod:`lagscope.lab.proxy_control`.

The names are loaded lazily so that ``python -m lagscope.lab.proxy`` (the proxy process) does not
import the proxy module twice, nor PyMySQL at all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lagscope.lab.proxy import LatencyProxy
    from lagscope.lab.proxy_control import ProxyClient, ProxyControl
    from lagscope.lab.servers import LabError, LabServer
    from lagscope.lab.topology import Credentials, Lab, LabConfig

__all__ = [
    "Credentials",
    "Lab",
    "LabConfig",
    "LabError",
    "LabServer",
    "LatencyProxy",
    "ProxyClient",
    "ProxyControl",
]

_HOMES = {
    "Credentials": "lagscope.lab.topology",
    "Lab": "lagscope.lab.topology",
    "LabConfig": "lagscope.lab.topology",
    "LabError": "lagscope.lab.servers",
    "LabServer": "lagscope.lab.servers",
    "LatencyProxy": "lagscope.lab.proxy",
    "ProxyClient": "lagscope.lab.proxy_control",
    "ProxyControl": "lagscope.lab.proxy_control",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'lagscope.lab' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
