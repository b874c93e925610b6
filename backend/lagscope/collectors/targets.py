"""Which monitored servers Lagscope may contact (``LAGSCOPE_ALLOWED_TARGETS``).

An optional allow-list of CIDRs (``10.20.0.0/16``, ``2001:db8::/32``, a bare address) and host
names (``db1.example.com``, or ``*.db.example.com`` for any name under a domain). Without one,
every target is allowed, as before. With one, it bounds what an editor can make the API and
the workers connect to: the connection test and stored instances must not become a way to
probe the internal network.

DNS rebinding: a name is resolved once, *every* address it resolves to is checked, and the
caller connects to the checked address (:meth:`AllowList.address_for`), never to the name
again — a second lookup could answer with an address that was never checked. A name listed
by name is trusted whatever it resolves to (the operator named it, not an address).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lagscope.errors import ServerUnreachable, TargetNotAllowed

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# host, port -> addresses; a parameter so unit tests resolve without DNS.
Resolver = Callable[[str, int], Sequence[str]]

ENV_NAME = "LAGSCOPE_ALLOWED_TARGETS"


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to for a TCP connection, in the resolver's order."""
    infos: list[tuple[Any, ...]] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True, slots=True)
class AllowList:
    """Parsed once at start; frozen and comparable, so it can sit in a ``ConnectionSpec``."""

    networks: tuple[Network, ...] = ()
    names: tuple[str, ...] = ()  # lower case; "*.example.com" matches below example.com

    @classmethod
    def parse(cls, text: str | None) -> AllowList | None:
        """``None`` for an empty setting (everything allowed); ValueError naming a bad entry."""
        entries = [e.strip() for e in (text or "").split(",") if e.strip()]
        if not entries:
            return None
        networks: list[Network] = []
        names: list[str] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            name = entry.lower().rstrip(".")
            label = name.removeprefix("*.")
            if not label or not all(_is_label(p) for p in label.split(".")):
                raise ValueError(
                    f"{ENV_NAME}: {entry!r} is neither a CIDR, an IP address nor a host name"
                )
            names.append(name)
        return cls(tuple(networks), tuple(names))

    def address_for(self, host: str, port: int, resolve: Resolver | None = None) -> str:
        """The checked address to connect to for ``host``; raises :class:`TargetNotAllowed`,
        or :class:`ServerUnreachable` when the name does not resolve."""
        server = f"{host}:{port}"
        literal = _ip(host)
        if literal is not None:
            if self._covers(literal):
                return str(literal)
            raise TargetNotAllowed(server, _REFUSED)
        try:
            addresses = list((resolve or system_resolver)(host, port))
        except (OSError, UnicodeError) as exc:
            raise ServerUnreachable(server, "the host name does not resolve") from exc
        if not addresses:
            raise ServerUnreachable(server, "the host name does not resolve")
        if self._names_host(host):
            return addresses[0]
        ips = [_ip(a) for a in addresses]
        if all(ip is not None and self._covers(ip) for ip in ips):
            return addresses[0]
        # Which addresses were refused stays out of the message: the answer to a caller must
        # not become a way to read internal DNS.
        raise TargetNotAllowed(server, _REFUSED)

    def check(self, host: str, port: int, resolve: Resolver | None = None) -> None:
        """For storing an instance: allowed now, or :class:`TargetNotAllowed` saying why.
        (Polling checks again at every connection, so a later DNS change is caught there.)"""
        try:
            self.address_for(host, port, resolve)
        except ServerUnreachable as exc:
            raise TargetNotAllowed(
                exc.server,
                f"the host name does not resolve, so it cannot be checked against {ENV_NAME}",
            ) from exc

    def _covers(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # ::ffff:10.0.0.1 is 10.0.0.1, whichever list it is checked in
        return any(ip.version == n.version and ip in n for n in self.networks)

    def _names_host(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return any(
            host.endswith(name[1:]) if name.startswith("*.") else host == name
            for name in self.names
        )


_REFUSED = f"not allowed by {ENV_NAME}; the server was not contacted"


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _is_label(part: str) -> bool:
    return 0 < len(part) <= 63 and all(c.isalnum() or c == "-" for c in part) and part.isascii()
