"""Test a connection as an operator would before adding an instance (``POST /instances/test``)."""

from __future__ import annotations

from dataclasses import dataclass

from lagscope.collectors import privileges
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.snapshot import InstanceSnapshot


@dataclass(frozen=True, slots=True)
class ProbeReport:
    snapshot: InstanceSnapshot
    privileges: privileges.PrivilegeReport


def probe(spec: ConnectionSpec) -> ProbeReport:
    """One snapshot and the user's privileges; raises the collector error naming the cause."""
    executor = PyMySQLExecutor(spec)
    poller = InstancePoller(executor)
    try:
        snapshot = poller.poll()
        grants = executor.run([privileges.STATEMENT])[0]
        return ProbeReport(snapshot, privileges.parse(snapshot.flavor.product, grants))
    finally:
        poller.close()
