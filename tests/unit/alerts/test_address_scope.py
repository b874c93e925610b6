"""Which resolved addresses a webhook may reach: only globally routable ones count as external.

Address checks only: nothing here sends traffic to any of these addresses.
"""

from __future__ import annotations

import ipaddress

import pytest

from lagscope.alerts.delivery_policy import address_allowed

HOST = "hooks.example"

# RFC 6890's special-purpose table (and IANA's registries since), one address from each block
# that is not globally reachable, plus the IPv6 forms that carry an internal IPv4 address.
NOT_GLOBAL = [
    "100.100.100.200",  # shared address space: a cloud's metadata endpoint lives here
    "100.64.0.1",
    "100.127.255.254",
    "0.0.0.0",
    "0.1.2.3",  # "this network"
    "10.0.0.1",
    "127.0.0.1",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.254",
    "192.0.0.1",  # IETF protocol assignments
    "192.0.0.170",  # NAT64 discovery
    "192.0.2.1",  # documentation
    "192.88.99.1",  # 6to4 relay anycast (deprecated)
    "192.168.1.1",
    "198.18.0.1",  # benchmarking
    "198.19.255.254",
    "198.51.100.1",
    "203.0.113.1",
    "224.0.0.1",  # multicast
    "224.0.1.1",  # multicast that Python calls global
    "239.255.255.250",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "::",
    "::1",
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:100.100.100.200",
    "::ffff:10.0.0.1",
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b::6464:64c8",  # NAT64 of 100.100.100.200
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b:1::1",  # NAT64 for local use
    "100::1",  # discard-only
    "2001::1",  # Teredo
    "2001:2::1",  # benchmarking
    "2001:10::1",  # ORCHID
    "2001:db8::1",  # documentation
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "2002:6464:64c8::1",  # 6to4 of 100.100.100.200
    "3fff::1",  # documentation (RFC 9637)
    "5f00::1",  # segment routing
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "ff02::1",
    "ff0e::1",  # global-scope multicast
]

GLOBAL = [
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",  # NAT64 of a public address
    "2002:808:808::1",  # 6to4 of a public address
    "2001:4860:4860::8888",
    "2a00:1450:4001::1",
]


@pytest.mark.parametrize("address", NOT_GLOBAL)
def test_a_not_globally_routable_address_is_internal(address: str) -> None:
    assert address_allowed(HOST, address, [HOST]) is False


@pytest.mark.parametrize("address", GLOBAL)
def test_a_globally_routable_address_behind_an_allowed_name_is_reached(address: str) -> None:
    assert address_allowed(HOST, address, [HOST]) is True


def test_a_teredo_address_is_judged_by_the_addresses_it_carries() -> None:
    # Teredo lives in 2001::/32, which is not global itself; whatever its client part holds.
    teredo = ipaddress.IPv6Address("2001:0:4136:e378:8000:63bf:80ff:fffe")  # client 127.0.0.1
    assert teredo.teredo is not None and str(teredo.teredo[1]) == "127.0.0.1"
    assert address_allowed(HOST, str(teredo), [HOST]) is False
    public_client = ipaddress.IPv6Address("2001:0:4136:e378:8000:63bf:f7f7:f7f7")  # 8.8.8.8
    assert public_client.teredo is not None and str(public_client.teredo[1]) == "8.8.8.8"
    # 2001::/23 is not globally reachable as a block: refused even with a public client.
    assert address_allowed(HOST, str(public_client), [HOST]) is False


@pytest.mark.parametrize(
    ("address", "entry"),
    [
        ("100.100.100.200", "100.64.0.0/10"),
        ("10.1.2.3", "10.0.0.0/8"),
        ("::ffff:127.0.0.1", "::ffff:127.0.0.0/104"),
    ],
)
def test_an_admin_may_still_name_an_internal_network(address: str, entry: str) -> None:
    assert address_allowed(HOST, address, [HOST, entry]) is True
