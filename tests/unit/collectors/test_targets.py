"""LAGSCOPE_ALLOWED_TARGETS: parsing, CIDR and name matching, one resolution per check."""

from __future__ import annotations

import ipaddress

import pytest

from lagscope.collectors.targets import AllowList
from lagscope.config import Settings
from lagscope.errors import ServerUnreachable, TargetNotAllowed


def allow(text: str) -> AllowList:
    parsed = AllowList.parse(text)
    assert parsed is not None
    return parsed


def resolver(answers: dict[str, list[str]]):
    calls: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        if host.lower() not in answers:  # DNS names are case-insensitive
            raise OSError("Name or service not known")
        return answers[host.lower()]

    return resolve, calls


def test_empty_means_no_list_and_bad_entries_are_named():
    assert AllowList.parse("") is None and AllowList.parse(" , ") is None
    parsed = allow(" 10.0.0.0/8, 192.0.2.7 ,2001:db8::/32, DB1.Example.com., *.db.internal ")
    assert [str(n) for n in parsed.networks] == ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32"]
    assert parsed.names == ("db1.example.com", "*.db.internal")
    for bad in ("10.0.0.0/33", "db_1.example.com", "exa mple.com", "*.", "http://x"):
        with pytest.raises(ValueError, match="LAGSCOPE_ALLOWED_TARGETS"):
            AllowList.parse(bad)


def test_settings_refuse_a_bad_list_at_start():
    secret = "x9-Fq2LmN7pR4sT8vW1yZ3bC6dE0gH5jK"
    with pytest.raises(ValueError, match="neither a CIDR"):
        Settings(secret_key=secret, allowed_targets="10.0.0.0/8, not a host")
    assert Settings(secret_key=secret).allow_list() is None
    assert Settings(secret_key=secret, allowed_targets="10.0.0.0/8").allow_list() == allow(
        "10.0.0.0/8"
    )


def test_addresses_are_checked_against_the_networks():
    rules = allow("10.0.0.0/8, 2001:db8::/32")
    resolve, calls = resolver({})
    assert rules.address_for("10.1.2.3", 3306, resolve) == "10.1.2.3"
    assert rules.address_for("[2001:db8::5]", 3306, resolve) == "2001:db8::5"
    assert calls == []  # literals are never looked up
    for host in ("127.0.0.1", "11.0.0.1", "::1", "2001:db9::1"):
        with pytest.raises(TargetNotAllowed, match="not allowed by LAGSCOPE_ALLOWED_TARGETS"):
            rules.address_for(host, 3306, resolve)
    # An IPv4-mapped IPv6 address is the IPv4 address.
    mapped = rules.address_for("::ffff:10.9.8.7", 3306, resolve)
    assert ipaddress.ip_address(mapped) == ipaddress.ip_address("::ffff:10.9.8.7")
    with pytest.raises(TargetNotAllowed):
        rules.address_for("::ffff:127.0.0.1", 3306, resolve)


def test_every_resolved_address_must_be_allowed_and_is_resolved_once():
    rules = allow("10.0.0.0/8")
    resolve, calls = resolver(
        {"inside.test": ["10.0.0.4", "10.0.0.5"], "mixed.test": ["10.0.0.4", "169.254.169.254"]}
    )
    assert rules.address_for("inside.test", 3306, resolve) == "10.0.0.4"
    with pytest.raises(TargetNotAllowed) as refused:
        rules.address_for("mixed.test", 3306, resolve)
    # The message does not disclose what the name resolved to.
    assert "169.254" not in str(refused.value) and "10.0.0.4" not in str(refused.value)
    assert calls == ["inside.test", "mixed.test"]


def test_names_listed_by_name_are_trusted_and_wildcards_cover_a_domain():
    rules = allow("db1.example.com, *.db.internal")
    resolve, _ = resolver(
        {
            "db1.example.com": ["192.0.2.1"],
            "a.db.internal": ["198.51.100.2"],
            "db.internal": ["198.51.100.3"],
            "evil-db1.example.com": ["192.0.2.9"],
        }
    )
    assert rules.address_for("DB1.example.com", 3306, resolve) == "192.0.2.1"
    assert rules.address_for("a.db.internal", 3306, resolve) == "198.51.100.2"
    for host in ("db.internal", "evil-db1.example.com"):
        with pytest.raises(TargetNotAllowed):
            rules.address_for(host, 3306, resolve)


def test_a_name_that_does_not_resolve():
    rules = allow("10.0.0.0/8")
    resolve, _ = resolver({})
    # Polling: unreachable (a DNS blip is not a policy change) …
    with pytest.raises(ServerUnreachable, match="does not resolve"):
        rules.address_for("gone.test", 3306, resolve)
    # … storing an instance: refused, because it cannot be checked.
    with pytest.raises(TargetNotAllowed, match="cannot be checked"):
        rules.check("gone.test", 3306, resolve)
