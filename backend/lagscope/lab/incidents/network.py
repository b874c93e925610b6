"""The network-bound incident: the far replica's proxy limited below the source's binlog rate, so it
falls behind on receiving while the near replica keeps up.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from lagscope.errors import InvalidInput
from lagscope.lab.incidents.common import (
    SCHEMA,
    Incident,
    _check_replica,
    _sql,
    _table_name,
    not_received,
    wait_for,
)
from lagscope.lab.incidents.load import _Load
from lagscope.lab.incidents.tables import _create, _table_lifetime
from lagscope.lab.topology import Lab


@contextlib.contextmanager
def network_bound(
    lab: Lab,
    *,
    replica: str | None = None,
    bandwidth_bps: float = 50_000,
    write_bps: float = 250_000,
    table: str = "wide_rows",
    min_backlog: int = 50,
) -> Iterator[Incident]:
    """Limit the proxied ``replica``'s link (default: the lab's only proxied one) to
    ``bandwidth_bps`` and write about ``write_bps`` of row events on the source: the far replica
    falls behind on receiving while a near replica keeps up. Returns once the far replica has
    ``min_backlog`` transactions written on the source but not yet received."""
    if replica is None:
        if len(lab.config.proxied) != 1:
            raise InvalidInput(f"say which replica; proxied: {list(lab.config.proxied)}")
        replica = lab.config.proxied[0]
    _check_replica(lab, replica)
    table = _table_name(table)
    proxy = lab.proxy_for(replica)
    row_bytes = 2000
    _create(
        lab,
        table,
        "id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, payload VARBINARY(4000) NOT NULL",
    )
    before = proxy.bandwidth_bps
    with contextlib.ExitStack() as undo:
        undo.enter_context(_table_lifetime(lab, table))
        began = time.time()
        proxy.set_bandwidth(bandwidth_bps)
        undo.callback(proxy.set_bandwidth, before)
        undo.enter_context(
            _Load(
                lab,
                _sql("INSERT INTO {t} (payload) VALUES (REPEAT('x', %s))", table),
                (row_bytes,),
                rate=write_bps / row_bytes,
            )
        )
        backlog = wait_for(
            lambda: (n := not_received(lab, replica)) >= min_backlog and n,
            timeout_s=60,
            what=f"{replica} to fall {min_backlog} transactions behind on receiving",
        )
        near = [r.name for r in lab.replicas if r.name not in lab.config.proxied]
        yield Incident(
            "network_bound",
            "network",
            replica,
            SCHEMA,
            table,
            details={
                "bandwidth_bps": bandwidth_bps,
                "write_bps": write_bps,
                "not_received_at_start": backlog,
                "near": near,
            },
            started_at=began,
        )
