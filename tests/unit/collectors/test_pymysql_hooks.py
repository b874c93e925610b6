"""The private PyMySQL methods Lagscope overrides or calls, as they were when it was written.

collectors/connection.py overrides PyMySQL's connection methods for the clear-text refusal, the
sha256_password handshake, the SHA-2 handler hook, the shared TLS context and the bounded reads
(``_read_bytes``, ``connect``; tests/unit/collectors/test_pymysql_read_hooks.py checks what they
lean on inside PyMySQL), collectors/sha2_auth.py reuses its private scramble and RSA helpers, and
collectors/binlog_dump.py sends a raw command. A PyMySQL release may rename or reshape any of them:
an override that no longer matches a method is silently never called, and the password rule it
enforces is gone. So PyMySQL is pinned below its next minor release, and this test fails the day one
of them is missing or has another signature.
"""

from __future__ import annotations

import inspect
import re
import tomllib
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pymysql
import pymysql._auth
import pymysql.connections

import lagscope
from lagscope.collectors.connection import _Connection

# The checkout whose code is imported (its pyproject.toml is the one that code is pinned by).
ROOT = Path(lagscope.__file__).resolve().parents[2]

# name -> the signature recorded against PyMySQL 1.2.
OVERRIDDEN = {
    "_create_ssl_ctx": "(self, sslp)",
    "_process_auth": "(self, plugin_name, auth_packet, handler=None)",
    "_request_authentication": "(self)",
    "_get_auth_plugin_handler": "(self, plugin_name)",
    "_read_bytes": "(self, num_bytes)",
    "connect": "(self, sock=None)",
}
CALLED_ON_CONNECTION = {
    "_read_packet": "(self, packet_type=<class 'pymysql.protocol.MysqlPacket'>)",
    "_execute_command": "(self, command, sql)",
    "write_packet": "(self, payload)",
}
CALLED_IN_AUTH = {
    "sha256_password_auth": "(conn, pkt)",
    "caching_sha2_password_auth": "(conn, pkt)",
    "scramble_caching_sha2": "(password, nonce)",
    "sha2_rsa_encrypt": "(password, salt, public_key)",
}


def changed_hooks(owner: Any, recorded: dict[str, str]) -> list[str]:
    """Each recorded name that is gone from ``owner`` or has another signature, said so."""
    problems = []
    for name, signature in recorded.items():
        found: Callable[..., Any] | None = getattr(owner, name, None)
        if found is None:
            problems.append(f"{name}: gone")
        elif str(inspect.signature(found)) != signature:
            problems.append(f"{name}: {inspect.signature(found)}, recorded {signature}")
    return problems


def test_every_overridden_hook_is_still_there_with_its_signature() -> None:
    assert changed_hooks(pymysql.connections.Connection, OVERRIDDEN) == []


def test_every_private_call_still_matches() -> None:
    assert changed_hooks(pymysql.connections.Connection, CALLED_ON_CONNECTION) == []
    assert changed_hooks(pymysql._auth, CALLED_IN_AUTH) == []


def test_the_overrides_are_exactly_the_recorded_ones() -> None:
    # A new override must be recorded here too (and so be watched).
    ours = {
        name
        for name, value in vars(_Connection).items()
        if callable(value) and hasattr(pymysql.connections.Connection, name)
    }
    assert ours - {"__init__"} == set(OVERRIDDEN)


def test_a_missing_or_reshaped_hook_is_reported() -> None:
    class Renamed:
        def _process_auth(self, plugin_name: Any, auth_packet: Any) -> None: ...

    problems = changed_hooks(Renamed, OVERRIDDEN)
    assert "_create_ssl_ctx: gone" in problems
    assert any(p.startswith("_process_auth: (self, plugin_name") for p in problems)


def _pymysql_requirement() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (found,) = [d for d in project["dependencies"] if d.lower().startswith("pymysql")]
    return str(found)


def test_pymysql_is_pinned_below_its_next_minor_release() -> None:
    requirement = _pymysql_requirement()
    upper = re.search(r"<\s*(\d+)\.(\d+)(?:\.0)?\s*(?:,|$)", requirement)
    assert upper, f"{requirement}: no upper bound of the form <X.Y"
    major, minor = (int(p) for p in version("PyMySQL").split(".")[:2])
    assert (int(upper.group(1)), int(upper.group(2))) == (major, minor + 1), requirement


def test_the_constraints_install_a_version_inside_the_pin() -> None:
    (pinned,) = [
        entry.split("==")[1]
        for entry in (ROOT / "constraints.txt").read_text().splitlines()
        if entry.startswith("PyMySQL==")
    ]
    lower = re.search(r">=\s*(\d+)\.(\d+)", _pymysql_requirement())
    upper = re.search(r"<\s*(\d+)\.(\d+)", _pymysql_requirement())
    assert lower and upper
    version = tuple(int(p) for p in pinned.split(".")[:2])
    assert (int(lower.group(1)), int(lower.group(2))) <= version
    assert version < (int(upper.group(1)), int(upper.group(2)))
