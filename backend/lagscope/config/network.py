"""Who the API may listen to and believe: loopback for the demo, and the proxies whose
forwarded headers count.

Demo mode lets every caller in as an admin, so it binds to this machine unless told otherwise;
a proxy is believed by the address it connects from, so only addresses and networks are taken.
"""

from __future__ import annotations

import ipaddress
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lagscope.config.settings import Settings


def is_loopback(host: str) -> bool:
    """Demo mode serves loopback clients only: 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_loopback_or_allowed(host: str, settings: Settings | None = None) -> None:
    """Refuse to bind demo mode to a non-loopback address unless explicitly allowed."""
    allow = settings.demo_allow_remote if settings else _env_flag("LAGSCOPE_DEMO_ALLOW_REMOTE")
    if not is_loopback(host) and not allow:
        raise ValueError(
            f"demo mode binds to loopback only (got --host {host}); every caller is an admin "
            "there. Set LAGSCOPE_DEMO_ALLOW_REMOTE=1 to serve it to other machines anyway"
        )


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def proxy_entries(text: str) -> list[str]:
    """The comma-separated entries of LAGSCOPE_TRUSTED_PROXIES, blanks dropped."""
    return [p.strip() for p in text.split(",") if p.strip()]


def check_proxies(text: str) -> None:
    """Raise ValueError on an entry that is not an address or a CIDR network."""
    for entry in (p.strip() for p in text.split(",")):
        if not entry:
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ValueError(
                f"{entry!r} is not an address or a CIDR network (host names are not "
                "accepted: a proxy is trusted by the address it connects from)"
            ) from None
