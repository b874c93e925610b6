"""The lab's topology: a MariaDB GTID source with N replicas on loopback, some behind a latency
proxy, started, watched and stopped as one.

By concern: config (what to start, its accounts), view (the servers, connections, status and
the state file), bring_up (the processes made ready and wired), catch_up (the wait until the
replicas have applied the source's writes), lab (the Lab: start, reattach, break, stop).
"""

from __future__ import annotations

from lagscope.lab.topology.config import HOST, PARALLEL_MODES, Credentials, LabConfig
from lagscope.lab.topology.lab import CRASH_DIR, Lab, sweep_abandoned
from lagscope.lab.topology.view import STATE_FILE

__all__ = [
    "CRASH_DIR",
    "HOST",
    "PARALLEL_MODES",
    "STATE_FILE",
    "Credentials",
    "Lab",
    "LabConfig",
    "sweep_abandoned",
]
