"""Webhook URL validation, allow-list, redirect rule and the back-off schedule."""

from __future__ import annotations

import random

import pytest

from lagscope.alerts.delivery_policy import (
    HIDDEN_NETWORK,
    HIDDEN_REFUSAL,
    WebhookUrlError,
    backoff_schedule,
    jittered,
    public_error,
    redacted_url,
    same_host,
    url_fingerprint,
    validate_webhook_url,
)

ALLOW = ["hooks.slack.com", "*.example.org", "127.0.0.0/8"]


@pytest.mark.parametrize(
    "url",
    ["https://hooks.slack.com/services/x", "http://a.example.org:8080/h", "http://127.0.0.1:9/x"],
)
def test_allowed(url: str) -> None:
    assert validate_webhook_url(url, ALLOW) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://hooks.slack.com/x", "http"),
        ("https://u:p@hooks.slack.com/x", "credentials"),
        ("https:///x", "no host"),
        ("http://hooks.slack.com:99999/x", "port"),
        ("http://169.254.169.254/latest", "allow-list"),
        ("http://example.org.evil.com/", "allow-list"),
        ("http://10.0.0.1/", "allow-list"),
    ],
)
def test_rejected(url: str, why: str) -> None:
    with pytest.raises(WebhookUrlError, match=why):
        validate_webhook_url(url, ALLOW)


def test_empty_allow_list_allows_nothing() -> None:
    with pytest.raises(WebhookUrlError):
        validate_webhook_url("http://127.0.0.1/", [])


def test_redirects_only_to_same_host() -> None:
    assert same_host("https://a.example.org/x", "https://a.example.org/y")
    assert not same_host("https://a.example.org/x", "https://b.example.org/x")
    assert not same_host("https://a.example.org/x", "http://a.example.org/x")


def test_backoff_covers_an_hour_even_with_jitter() -> None:
    delays = backoff_schedule()
    assert delays[:3] == [10.0, 20.0, 40.0] and max(delays) == 900.0
    rng = random.Random(1)
    for _ in range(100):
        assert sum(jittered(d, rng) for d in delays) >= 3600
    assert all(d / 2 <= jittered(d, rng) <= d for d in delays)
    short = backoff_schedule(base_s=0.1, cap_s=0.2, horizon_s=0.25)
    assert short == [0.1, 0.2, 0.2]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://hooks.slack.com/services/T0/B0/XXXXsecret", "https://hooks.slack.com/…"),
        ("http://127.0.0.1:9093/hook?api_key=k3y", "http://127.0.0.1:9093/…"),
        ("https://a.example.org/#tok", "https://a.example.org/…"),
        ("https://a.example.org", "https://a.example.org"),
        ("https://a.example.org/", "https://a.example.org"),
        ("http://[::1]:8080/x", "http://[::1]:8080/…"),
    ],
)
def test_a_url_is_shown_as_scheme_host_and_port_only(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


def test_the_url_fingerprint_is_keyed_and_tells_urls_apart() -> None:
    url = "https://hooks.slack.com/services/T0/B0/XXXXsecret"
    mine = url_fingerprint(url, "key-one")
    assert len(mine) == 8 and int(mine, 16) >= 0
    assert mine == url_fingerprint(url, "key-one")
    assert mine != url_fingerprint(url + "x", "key-one")
    assert mine != url_fingerprint(url, "key-two")  # no offline test of a guessed URL


@pytest.mark.parametrize(
    ("error", "status", "shown"),
    [
        (None, 200, None),
        ("HTTP 503", 503, "HTTP 503"),
        ("ConnectError: [Errno 111] Connection refused", None, HIDDEN_NETWORK),
        ("ConnectTimeout: timed out", None, HIDDEN_NETWORK),
        ("ConnectError: cannot resolve h.example: [Errno -2] Name or service not known", None,
         HIDDEN_NETWORK),
        ("refused: h.example resolves to 10.0.0.7, an internal address not on the webhook "
         "destination allow-list", None, HIDDEN_REFUSAL),
        ("refused: redirect to another host (http://10.0.0.7:22/x)", 302,
         "refused: a redirect to another host"),
    ],
)  # fmt: skip
def test_errors_without_an_http_answer_are_generic_for_non_admins(
    error: str | None, status: int | None, shown: str | None
) -> None:
    assert public_error(error, status) == shown
