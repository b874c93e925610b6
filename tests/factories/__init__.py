"""Test data builders, one package: ``store`` (a migrated store, a cluster with its instances,
the secret box — re-exported here, as most tests use them), ``causes`` (channel metrics and
status shapes for the cause rules), ``snapshots`` (an instance's poll built by hand) and
``fleet`` (many clusters at once, for the overview)."""

from tests.factories.store import (
    UNPOLLED_SALT,
    InstanceSpec,
    make_cluster,
    memory_session,
    secret_box,
    sqlite_file,
    sqlite_store,
)

__all__ = [
    "UNPOLLED_SALT",
    "InstanceSpec",
    "make_cluster",
    "memory_session",
    "secret_box",
    "sqlite_file",
    "sqlite_store",
]
