"""Login throttle keys: one per (username, client) and one per client,
never one per username alone; an IPv6 client counts by its /64."""

from __future__ import annotations

from lagscope.security.login_throttle import client_key, keys


def test_keys_pair_the_username_with_the_client_and_never_stand_alone():
    assert keys("Alice", "127.0.0.1") == [
        ("user:alice|127.0.0.1", "user"),
        ("addr:127.0.0.1", "addr"),
    ]
    assert keys("alice", None) == [("user:alice|-", "user")]


def test_an_ipv6_client_counts_by_its_slash_64():
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:ffff::9")
    assert client_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:127.0.0.1") == "127.0.0.1"
    assert client_key("::1") == "::/64"
    assert client_key("testclient") == "testclient"
