"""Pure delivery decisions: webhook URL validation against a destination allow-list, the retry
back-off schedule (exponential with full jitter, covering at least an hour of receiver outage),
and what of a URL and of a delivery's errors the API shows.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import random
from collections.abc import Sequence
from urllib.parse import urlsplit


class WebhookUrlError(ValueError):
    """A webhook URL that may not be used; the message says why."""


def _host_allowed(host: str, allow: Sequence[str]) -> bool:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    for entry in allow:
        entry = entry.strip().lower()
        if not entry:
            continue
        if ip is not None and "/" in entry:
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
        elif entry.startswith("*."):
            if host.endswith(entry[1:]):
                return True
        elif host == entry:
            return True
    return False


def validate_webhook_url(url: str, allow: Sequence[str]) -> str:
    """Return the URL if http(s), without credentials, and its host is on the allow-list.

    ``allow`` holds host names, ``*.suffix`` wildcards and CIDR networks; empty means nothing is
    allowed (an admin must opt in, so alerts cannot be aimed at arbitrary internal services).
    The address a name resolves to is checked at send time by :func:`address_allowed` (DNS
    can change), and the connection goes to that checked address.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise WebhookUrlError("webhook URL must start with http:// or https://")
    if parts.username or parts.password:
        raise WebhookUrlError("put credentials in the target's secret, not in the URL")
    host = (parts.hostname or "").lower()
    if not host:
        raise WebhookUrlError("webhook URL has no host")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        raise WebhookUrlError("webhook URL has an invalid port") from exc
    if not _host_allowed(host, allow):
        raise WebhookUrlError(
            f"host {host!r} is not on the webhook destination allow-list "
            "(LAGSCOPE_WEBHOOK_ALLOWED_HOSTS)"
        )
    return parts.geturl()


def address_allowed(host: str, address: str, allow: Sequence[str]) -> bool:
    """May a request for ``host`` (already on the allow-list) connect to ``address``, what the
    name resolved to at send time?

    A globally routable address: yes (the admin allowed the name). Any other (loopback,
    private, shared address space with its cloud metadata endpoint 100.100.100.200, link-local,
    benchmarking, documentation, multicast, reserved …, or an IPv6 form carrying such an IPv4
    address): only if the allow-list names that address or a network holding it, so a name
    that is re-pointed (DNS rebinding) cannot aim alerts at the inside."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if _host_allowed(str(ip), [e for e in allow if _is_address_entry(e)]):
        return True
    return is_external(ip) and _host_allowed(host.lower(), allow)


# Not globally reachable (IANA's special-purpose registries), yet ``is_global`` on the Python
# this runs on says they are; a newer Python may know them already.
_NOT_GLOBAL = tuple(
    ipaddress.ip_network(n)
    for n in (
        "192.88.99.0/24",  # 6to4 relay anycast, deprecated: whoever answers is a stranger
        "::/96",  # IPv4-compatible IPv6, deprecated
        "64:ff9b:1::/48",  # NAT64 for local use
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing identifiers
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def is_external(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Globally routable, and so is every IPv4 address the IPv6 one carries (mapped, 6to4,
    Teredo, NAT64's well-known prefix): an IPv6 form of 127.0.0.1 is as internal as it."""
    if isinstance(ip, ipaddress.IPv6Address):
        # Mapped and NAT64 addresses are the IPv4 address they carry (both sit in ::/8, which
        # Python calls reserved as a whole).
        if ip.ipv4_mapped is not None:
            return is_external(ip.ipv4_mapped)
        if ip in _NAT64:
            return is_external(ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF))
    if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return False
    if any(ip.version == n.version and ip in n for n in _NOT_GLOBAL):
        return False
    return all(is_external(inner) for inner in _embedded(ip))


def _embedded(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    inner = [ip.sixtofour] if ip.sixtofour is not None else []
    if ip.teredo is not None:
        inner += list(ip.teredo)  # the Teredo server, then the client's own address
    return inner


def _is_address_entry(entry: str) -> bool:
    entry = entry.strip()
    try:
        ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False
    return True


def same_host(original: str, redirect: str) -> bool:
    """Redirects are followed only to the same scheme, host and port."""
    a, b = urlsplit(original), urlsplit(redirect)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


def backoff_schedule(
    base_s: float = 10.0, cap_s: float = 900.0, horizon_s: float = 3600.0
) -> list[float]:
    """Nominal delays before each retry: base·2^n capped, until even their minimum after
    :func:`jittered` (half of each) adds up to ``horizon_s`` of receiver outage."""
    delays: list[float] = []
    while sum(delays) / 2 < horizon_s:
        delays.append(min(cap_s, base_s * 2 ** len(delays)))
    return delays


def jittered(delay_s: float, rng: random.Random) -> float:
    """Jitter in [delay/2, delay]: spreads retries yet keeps the schedule's total ≥ half nominal."""
    return delay_s / 2 + rng.random() * delay_s / 2


def redacted_url(url: str) -> str:
    """Scheme, host and port only: webhook URLs carry secrets in their path or query (Slack's
    ``/services/T…/B…/token``, ``?api_key=``), so no one reads them back, admins included."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    rest = "/…" if (parts.path not in ("", "/") or parts.query or parts.fragment) else ""
    return f"{parts.scheme}://{host}{port}{rest}"


def url_fingerprint(url: str, key: str) -> str:
    """8 hex digits of an HMAC-SHA256 of the URL under the server's key: tells two targets'
    URLs apart, or a changed one, without letting anyone test a guessed URL offline."""
    mac = hmac.new(key.encode(), b"lagscope webhook url\0" + url.encode(), hashlib.sha256)
    return mac.hexdigest()[:8]


HIDDEN_REFUSAL = "refused by the webhook destination policy (the detail is shown to admins)"
HIDDEN_NETWORK = "no HTTP answer (the detail is shown to admins)"


def public_error(error: str | None, status_code: int | None) -> str | None:
    """A delivery error as a viewer or an editor reads it: the receiver's HTTP status, or a
    generic outcome. Which address a name resolved to, and whether a port refused, timed out or
    failed TLS, is for admins only (a webhook target must not work as a DNS or port probe)."""
    if error is None:
        return None
    if status_code is not None:
        if error.startswith("refused: redirect"):
            return "refused: a redirect to another host"
        return error if error.startswith("HTTP ") else f"HTTP {status_code}"
    if error.startswith("refused:"):
        return HIDDEN_REFUSAL
    return HIDDEN_NETWORK
