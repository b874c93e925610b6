"""The demo's webhook inbox keeps the newest alerts, bounded, as a receiver would see them."""

from __future__ import annotations

from datetime import UTC, datetime

from lagscope.alerts.signing import sign
from lagscope.api.demo_inbox import (
    CAPACITY,
    HEADER_TEXT_MAX,
    DemoInbox,
    kept_headers,
    signature_check,
)
from lagscope.demo.alerting import inbox_allow, inbox_url


def test_keeps_the_newest_only():
    inbox = DemoInbox()
    for n in range(CAPACITY + 50):
        inbox.receive({"idempotency-key": f"k{n}"}, {"n": n}, "unsigned")
    entries = inbox.entries()
    assert len(entries) == CAPACITY == inbox.capacity
    assert [e.payload["n"] for e in entries[:2]] == [CAPACITY + 49, CAPACITY + 48]
    assert entries[-1].payload["n"] == 50


def test_a_redelivery_counts_on_the_first_entry():
    inbox = DemoInbox()
    first = inbox.receive(
        {"Idempotency-Key": "k"}, {"a": 1}, "valid", datetime(2026, 1, 1, tzinfo=UTC)
    )
    again = inbox.receive(
        {"Idempotency-Key": "k"}, {"a": 1}, "valid", datetime(2026, 1, 2, tzinfo=UTC)
    )
    assert (again.id, again.times_received) == (first.id, 2)
    assert again.received_at < again.last_received_at
    other = inbox.receive({"Idempotency-Key": "k"}, {"a": 2}, "valid")  # same key, other body
    unkeyed = inbox.receive({}, {"a": 1}, "unsigned")
    assert len({first.id, other.id, unkeyed.id}) == 3
    assert len(inbox.entries()) == 3


def test_keeps_the_headers_a_receiver_reads_bounded():
    kept = kept_headers(
        {"idempotency-key": "x" * 2000, "x-lagscope-signature": "v1=ab", "cookie": "secret"}
    )
    assert kept == {"Idempotency-Key": "x" * HEADER_TEXT_MAX, "X-Lagscope-Signature": "v1=ab"}


def test_checks_the_signature_like_a_receiver():
    body, now = b'{"a":1}', 1_800_000_000
    headers = {"x-lagscope-timestamp": str(now), "x-lagscope-signature": sign(b"s", now, body)}
    assert signature_check(headers, body, [b"other", b"s"], now) == "valid"
    assert signature_check(headers, body + b" ", [b"s"], now) == "invalid"
    assert signature_check(headers, body, [b"s"], now + 3600) == "invalid"  # replayed later
    assert signature_check({}, body, [b"s"], now) == "unsigned"


def test_the_inbox_address_is_allowed_for_the_demo_only_by_name():
    assert inbox_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/api/v1/demo/inbox"
    assert inbox_url("::1", 8000) == "http://[::1]:8000/api/v1/demo/inbox"
    assert inbox_allow("127.0.0.1") == "127.0.0.1"
    assert inbox_allow("127.0.0.1", "hooks.example, 127.0.0.1") == "hooks.example,127.0.0.1"
    assert inbox_allow("127.0.0.1", "hooks.example") == "hooks.example,127.0.0.1"
