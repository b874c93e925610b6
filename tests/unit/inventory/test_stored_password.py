"""inventory.password_targets.stored_password_refusal: when a connection test may use an
instance's stored password (POST /instances/test with instance_id and no password)."""

from __future__ import annotations

import pytest

from lagscope.collectors.connection import ConnectionSpec
from lagscope.inventory.instances import tls_of
from lagscope.inventory.password_targets import stored_password_refusal
from lagscope.models import Instance


def stored(**changes: object) -> Instance:
    fields: dict[str, object] = {
        "id": 7,
        "host": "db1.example",
        "port": 3306,
        "user": "lagscope",
        "password_enc": "token",
        "tls": "required",
        "tls_ca_path": None,
    }
    return Instance(**{**fields, **changes})


OWN = {"host": "db1.example", "port": 3306, "user": "lagscope", "tls": "required"}


def refusal(instance: Instance, ca: str | None = None, **body: object) -> str | None:
    sent: dict[str, object] = {**OWN, **body}
    return stored_password_refusal(
        instance,
        str(sent["host"]),
        int(str(sent["port"])),
        str(sent["user"]),
        str(sent["tls"]),
        ca,
    )


def test_its_own_address_and_user_may_use_it() -> None:
    assert refusal(stored()) is None
    assert refusal(stored(), tls="verify_identity") is None  # stronger TLS: fine
    assert (
        refusal(stored(tls="verify_ca", tls_ca_path="/ca/a.pem"), "/ca/a.pem", tls="verify_ca")
        is None
    )


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"host": "db2.example"}, "host"),
        ({"host": "DB1.example"}, "host"),  # exactly: no case folding, no resolution
        ({"host": "127.0.0.1"}, "host"),
        ({"port": 3307}, "port"),
        ({"user": "root"}, "user"),
        ({"host": "db2.example", "user": "root"}, "host, user"),
    ],
)
def test_another_address_or_user_may_not(body: dict[str, object], named: str) -> None:
    reason = refusal(stored(), **body)
    assert reason is not None
    assert reason.startswith(f"{named} differ")
    assert "only used for the instance's own address and user" in reason
    assert "retype" in reason


def test_the_address_rule_holds_even_without_a_stored_password() -> None:
    assert refusal(stored(password_enc=""), port=3307) is not None


def test_weaker_tls_or_other_cas_may_not() -> None:
    weaker = refusal(stored(), tls="preferred")
    assert weaker is not None and "tls preferred is weaker" in weaker and "retype" in weaker
    verified = stored(tls="verify_ca", tls_ca_path="/ca/a.pem")
    other_ca = refusal(verified, "/ca/b.pem", tls="verify_ca")
    assert other_ca is not None and "tls_ca_path differs" in other_ca
    system_cas = refusal(verified, None, tls="verify_ca")
    assert system_cas is not None and "tls_ca_path differs" in system_cas
    assert refusal(verified, "", tls="verify_identity") is not None  # "" is no path


def test_tls_does_not_matter_with_no_stored_password() -> None:
    """As for edits (update_instance): nothing secret is sent under the weaker TLS."""
    assert refusal(stored(password_enc=""), tls="preferred") is None


def test_another_pinned_public_key_may_not() -> None:
    """The pinned key decides who can read the password (sha256_password / caching_sha2
    without TLS): another one is another recipient. None only refuses more."""
    own = stored(tls="preferred", server_public_key_path="/ca/db1.pem")

    def with_key(key: str | None) -> str | None:
        return stored_password_refusal(own, "db1.example", 3306, "lagscope", "preferred", None, key)

    assert with_key("/ca/db1.pem") is None
    assert with_key(None) is None and with_key("") is None
    assert (
        stored_password_refusal(stored(), "db1.example", 3306, "lagscope", "required", None, None)
        is None
    )
    for other in ("/ca/db2.pem",):
        reason = with_key(other)
        assert reason is not None and "server_public_key_path differs" in reason
        assert "retype" in reason


def test_every_connection_to_an_instance_carries_its_pin() -> None:
    """Polls (connection_spec) and the heartbeat writer (ingest/heartbeat.py builds its spec
    from tls_of(source)) use the instance's pinned key, like its TLS setting."""
    pinned = stored(tls="preferred", server_public_key_path="/ca/db1.pem")
    spec = ConnectionSpec("db1.example", **tls_of(pinned))
    assert (spec.tls, spec.server_public_key_path) == ("preferred", "/ca/db1.pem")
