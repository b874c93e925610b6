"""The lab's own failures, raised by every part of it (servers, processes, template, topology).

In a module of their own so the parts that start processes and the servers they start can both
raise them without importing each other.
"""

from __future__ import annotations

from lagscope.errors import LagscopeError


class LabError(LagscopeError):
    """The lab could not do what was asked: a server did not start, replicas did not catch up …"""


class PortInUse(LabError):
    """A server or proxy could not bind its port: someone took it between choosing and binding."""
