"""Flavor and version of a server, read once per connection.

SQL: ``SELECT @@version, @@version_comment`` (docs/replication.md, "Which status statement": a
``-MariaDB`` suffix in ``@@version`` means MariaDB). Nothing here compares versions to choose
behaviour; that is :func:`lagscope.collectors.dialect.dialect_for`'s job alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Product = Literal["mysql", "mariadb"]

FLAVOR_SQL = "SELECT @@version, @@version_comment"

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class ServerFlavor:
    """What a server is: product and numeric version, plus the raw strings for display."""

    product: Product
    version: tuple[int, int, int]
    version_string: str = ""
    version_comment: str = ""

    def __str__(self) -> str:
        return f"{self.product} {'.'.join(map(str, self.version))}"


def parse_flavor(version: str, version_comment: str = "") -> ServerFlavor | None:
    """Parse ``@@version`` / ``@@version_comment``; ``None`` if the version has no x.y.z prefix.

    MariaDB 10.x once shipped with a ``5.5.5-`` replication prefix in the handshake; ``@@version``
    itself does not carry it, but tolerate it so a recorded handshake string parses too.
    """
    text = version.strip()
    if text.startswith("5.5.5-") and "mariadb" in text.lower():
        text = text[len("5.5.5-") :]
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    numbers = (int(match.group(1)), int(match.group(2)), int(match.group(3)))
    product: Product = "mariadb" if "mariadb" in text.lower() else "mysql"
    return ServerFlavor(product, numbers, version.strip(), (version_comment or "").strip())
