"""Webhook signatures: HMAC-SHA256 over ``f"{timestamp}." + body`` (docs/alerts.md, "Signatures").

Headers sent: ``X-Lagscope-Timestamp: <unix seconds>`` and
``X-Lagscope-Signature: v1=<hex digest>``. The timestamp is inside the MAC so a captured request
cannot be replayed later with a fresh timestamp; receivers reject timestamps older than a tolerance.
"""

from __future__ import annotations

import hashlib
import hmac

TIMESTAMP_HEADER = "X-Lagscope-Timestamp"
SIGNATURE_HEADER = "X-Lagscope-Signature"
DEFAULT_TOLERANCE_S = 300


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """The signature header value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret, str(timestamp).encode("ascii") + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def verify(
    secret: bytes,
    timestamp: str,
    body: bytes,
    signature: str,
    now: float,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
) -> bool:
    """The receiver's check (the same code is in docs/alerts.md)."""
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs(now - ts) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, ts, body), signature)
