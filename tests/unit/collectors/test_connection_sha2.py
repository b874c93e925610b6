"""sha256_password and caching_sha2_password full authentication, against a rogue server.

The fake server (tests/unit/fakes/fake_mysql.py) demands the password by one of the SHA-2 plugins
and hands out its own RSA public key when asked: PyMySQL alone encrypts the password with it,
so the server reads it. Lagscope sends it only inside verified TLS, or encrypted with the key
the operator pinned (``server_public_key_path``); everything else is refused, nothing sent.
"""

from __future__ import annotations

import ssl
from itertools import cycle
from pathlib import Path

import pymysql
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from lagscope.collectors.connection import (
    ConnectionSpec,
    check_public_key_setting,
    open_connection,
)
from lagscope.collectors.executor import PyMySQLExecutor
from lagscope.errors import InvalidInput, Sha2AuthRefused
from lagscope.lab.certs import make_ca
from tests.unit.fakes.fake_mysql import SALT, SWITCH_SALT, FakeMySQL

SECRET = "Hunter2-never-to-a-rogue"
SHA2 = ["sha256_password", "caching_sha2_password"]
# How the server asks: announcing the plugin in its handshake, or switching to it afterwards.
ASKED = ["announced", "switched"]


@pytest.fixture(scope="module")
def keys() -> dict[str, RSAPrivateKey]:
    """The real server's key pair (the one an operator pins) and a rogue's."""
    return {
        name: rsa.generate_private_key(public_exponent=65537, key_size=2048)
        for name in ("real", "rogue")
    }


@pytest.fixture
def pinned(tmp_path: Path, keys: dict[str, RSAPrivateKey]) -> str:
    path = tmp_path / "ca" / "db1-public.pem"
    path.parent.mkdir()
    path.write_bytes(
        keys["real"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return str(path)


def fake(plugin: str, asked: str, **kwargs: object) -> FakeMySQL:
    if asked == "announced":
        return FakeMySQL(plugin=plugin, switch_to=None, **kwargs)  # type: ignore[arg-type]
    return FakeMySQL(switch_to=plugin, **kwargs)  # type: ignore[arg-type]


def spec(port: int, **kwargs: object) -> ConnectionSpec:
    return ConnectionSpec("127.0.0.1", port, "mon", SECRET, connect_timeout_s=10, **kwargs)  # type: ignore[arg-type]


def decrypt(key: RSAPrivateKey, blob: bytes, salt: bytes) -> bytes:
    """What the server reads from an RSA-encrypted answer: password XOR salt, NUL-ended."""
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
    plain = key.decrypt(blob, oaep)
    return bytes(b ^ s for b, s in zip(plain, cycle(salt[:20]), strict=False))


def salt_of(server: FakeMySQL) -> bytes:
    return server.auth_salt


@pytest.mark.parametrize("asked", ASKED)
@pytest.mark.parametrize("plugin", SHA2)
def test_the_rogue_server_does_harvest_a_plain_pymysql_login(
    keys: dict[str, RSAPrivateKey], plugin: str, asked: str
) -> None:
    """The hazard is real: PyMySQL alone asks the server for its key and encrypts with it."""
    with fake(plugin, asked, rsa_key=keys["rogue"]) as server:
        pymysql.connect(
            host="127.0.0.1", port=server.port, user="mon", password=SECRET, connect_timeout=10
        ).close()
    assert server.auth_answers[-2][:1] in (b"\x01", b"\x02")  # it asked for the key …
    harvested = decrypt(keys["rogue"], server.auth_answers[-1], salt_of(server))
    assert harvested == SECRET.encode() + b"\0"  # … and sent the password under it


# What the client sends before refusing, exactly: never an answer to a key the server sent.
EXPECTED_BEFORE_REFUSAL = {
    # PyMySQL's handshake asks for the key (b"\1"); the key comes, nothing follows it.
    ("sha256_password", "announced"): lambda answers: answers == [b"\x01"],
    # The handshake's native scramble; refused at the switch, before any answer.
    ("sha256_password", "switched"): lambda answers: len(answers) == 1 and len(answers[0]) == 20,
    # The fast path's scramble; refused at "full authentication needed".
    ("caching_sha2_password", "announced"): lambda answers: [len(a) for a in answers] == [32],
    ("caching_sha2_password", "switched"): lambda answers: [len(a) for a in answers] == [20, 32],
}


@pytest.mark.parametrize("asked", ASKED)
@pytest.mark.parametrize("plugin", SHA2)
def test_without_tls_and_without_a_pin_the_password_is_refused_and_nothing_sent(
    keys: dict[str, RSAPrivateKey], plugin: str, asked: str
) -> None:
    server = fake(plugin, asked, rsa_key=keys["rogue"])
    with server, pytest.raises(Sha2AuthRefused) as info:
        PyMySQLExecutor(spec(server.port)).run(["SELECT 1"])
    message = str(info.value)
    assert f"server asked for the password by {plugin}" in message
    assert "a public key the server itself sends" in message
    assert "server_public_key_path" in message and "verify_identity" in message
    assert info.value.server == f"127.0.0.1:{server.port}"
    assert SECRET.encode() not in server.received
    assert EXPECTED_BEFORE_REFUSAL[plugin, asked](server.auth_answers), server.auth_answers
    assert server.errors, "the client hung up"


@pytest.mark.parametrize("asked", ASKED)
@pytest.mark.parametrize("plugin", SHA2)
def test_a_pinned_key_encrypts_the_password_and_the_server_key_is_never_used(
    keys: dict[str, RSAPrivateKey], pinned: str, plugin: str, asked: str
) -> None:
    # A rogue hands out its own key: the password goes under the pinned one, which it cannot
    # read.
    with fake(plugin, asked, rsa_key=keys["rogue"]) as rogue:
        open_connection(spec(rogue.port, server_public_key_path=pinned)).close()
    blob = rogue.auth_answers[-1]
    with pytest.raises(ValueError):
        decrypt(keys["rogue"], blob, salt_of(rogue))
    assert decrypt(keys["real"], blob, salt_of(rogue)) == SECRET.encode() + b"\0"
    # The real server (holding the pinned key's private half) reads it.
    with fake(plugin, asked, rsa_key=keys["real"]) as real:
        open_connection(spec(real.port, server_public_key_path=pinned)).close()
    assert decrypt(keys["real"], real.auth_answers[-1], salt_of(real)) == SECRET.encode() + b"\0"
    assert SECRET.encode() not in real.received
    if asked == "switched":
        assert salt_of(real) == SWITCH_SALT  # encrypted with the switch's salt, not the first
    else:
        assert salt_of(real) == SALT


def test_the_caching_sha2_fast_path_still_logs_in_without_tls_or_a_pin() -> None:
    for asked in ASKED:
        with fake("caching_sha2_password", asked, fast_ok=True) as server:
            open_connection(spec(server.port)).close()
        assert len(server.auth_answers[-1]) == 32  # the scramble, never the password
        assert SECRET.encode() not in server.received


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> object:
    return make_ca(tmp_path_factory.mktemp("pki"), "sha2-ca").issue("by-ip", ["127.0.0.1"])


def server_tls(cert: object) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert.cert_path, cert.key_path)  # type: ignore[attr-defined]
    return context


@pytest.mark.parametrize("with_pin", [False, True])
@pytest.mark.parametrize("asked", ASKED)
@pytest.mark.parametrize("plugin", SHA2)
def test_over_unverified_tls_the_password_is_refused_even_with_a_pin(
    keys: dict[str, RSAPrivateKey],
    cert: object,
    pinned: str,
    plugin: str,
    asked: str,
    with_pin: bool,
) -> None:
    """Inside TLS the password goes as it is (the server reads an RSA blob as the password):
    an unverified certificate is anyone's, so it is refused like no TLS at all."""
    server = fake(plugin, asked, rsa_key=keys["rogue"], tls=server_tls(cert))
    key = {"server_public_key_path": pinned} if with_pin else {}
    with server, pytest.raises(Sha2AuthRefused) as info:
        PyMySQLExecutor(spec(server.port, **key)).run(["SELECT 1"])  # preferred: TLS, unverified
    assert server.used_tls
    assert SECRET.encode() not in server.received
    assert "over TLS it would be sent as it is" in str(info.value)
    assert ("serves only a server without TLS" in str(info.value)) is with_pin


@pytest.mark.parametrize("asked", ASKED)
@pytest.mark.parametrize("plugin", SHA2)
def test_over_verified_tls_the_password_goes_inside_tls(
    keys: dict[str, RSAPrivateKey], cert: object, plugin: str, asked: str
) -> None:
    ca = str(cert.ca_path)  # type: ignore[attr-defined]
    with fake(plugin, asked, rsa_key=keys["rogue"], tls=server_tls(cert)) as server:
        open_connection(spec(server.port, tls="verify_identity", tls_ca_path=ca)).close()
    assert server.used_tls
    assert server.auth_answers[-1] == SECRET.encode() + b"\0"


def test_an_unloadable_pin_is_refused_naming_the_path_only(tmp_path: Path) -> None:
    garbage = tmp_path / "not-a-key.pem"
    garbage.write_text("hello")
    for path in (tmp_path / "missing.pem", garbage):
        server = FakeMySQL(switch_to="sha256_password")
        with server, pytest.raises(Sha2AuthRefused) as info:
            PyMySQLExecutor(spec(server.port, server_public_key_path=str(path))).run(["SELECT 1"])
        assert f"cannot load the pinned server_public_key_path {path}" in str(info.value)
        assert "No such file" not in str(info.value)
        assert SECRET.encode() not in server.received


def test_a_pin_is_bounded_by_the_ca_directory_and_used_only_with_preferred(
    tmp_path: Path,
) -> None:
    ca_dir = tmp_path / "ca"
    ca_dir.mkdir()
    check_public_key_setting("preferred", str(ca_dir / "db1.pem"), str(ca_dir))
    check_public_key_setting("preferred", None, str(ca_dir))
    check_public_key_setting("preferred", "/etc/passwd", None)  # the operator's CLI: no bound
    for outside in ("/etc/passwd", f"{ca_dir}/../x.pem", f"{ca_dir}x"):
        with pytest.raises(InvalidInput, match="server_public_key_path must be inside"):
            check_public_key_setting("preferred", outside, str(ca_dir))
    with pytest.raises(InvalidInput, match="absolute"):
        check_public_key_setting("preferred", "db1.pem", str(ca_dir))
    for mode in ("required", "verify_ca", "verify_identity"):
        with pytest.raises(InvalidInput, match="used only without TLS"):
            check_public_key_setting(mode, str(ca_dir / "db1.pem"), str(ca_dir))
