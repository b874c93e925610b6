"""The clear-text refusal and the TLS modes, against a fake MySQL server on loopback.

The fake server asks for the password in clear (an AuthSwitchRequest to mysql_clear_password or
to dialog) and records every byte it receives: the password must never be among them unless the
session is TLS with a verified certificate.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterator
from pathlib import Path

import pymysql
import pymysql.err
import pytest

from lagscope.collectors.connection import (
    ConnectionSpec,
    _verifying_context,
    check_tls_setting,
    open_connection,
    tls_context,
)
from lagscope.collectors.executor import PyMySQLExecutor, translate_error
from lagscope.errors import ClearTextAuthRefused, InvalidInput, ServerUnreachable, TlsFailed
from lagscope.lab.certs import ServerCertificate, make_ca
from tests.unit.fakes.fake_mysql import FakeMySQL

SECRET = "Hunter2-never-in-clear"
CLEAR_TEXT = ["mysql_clear_password", "dialog"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    directory = tmp_path_factory.mktemp("pki")
    ca = make_ca(directory, "right-ca")
    return {
        "ip": ca.issue("by-ip", ["127.0.0.1"]),
        "name_only": ca.issue("by-name", ["db.example.invalid"]),
        "other_ca": make_ca(directory, "other-ca").cert_path,
    }


def server_tls(cert: ServerCertificate) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert.cert_path, cert.key_path)
    return context


def spec(port: int, **kwargs: object) -> ConnectionSpec:
    return ConnectionSpec("127.0.0.1", port, "mon", SECRET, connect_timeout_s=10, **kwargs)  # type: ignore[arg-type]


def test_the_fake_server_does_harvest_a_plain_pymysql_login() -> None:
    """The hazard is real: PyMySQL on its own answers mysql_clear_password with the password,
    without TLS. (This is what every test below would see without the refusal.)"""
    with FakeMySQL(switch_to="mysql_clear_password") as fake:
        pymysql.connect(
            host="127.0.0.1", port=fake.port, user="mon", password=SECRET, connect_timeout=10
        ).close()
    assert SECRET.encode() + b"\0" in fake.received


@pytest.mark.parametrize("announced", ["mysql_native_password", "mysql_clear_password"])
@pytest.mark.parametrize("plugin", CLEAR_TEXT)
def test_clear_text_auth_without_tls_is_refused_and_nothing_is_sent(
    plugin: str, announced: str
) -> None:
    with FakeMySQL(plugin=announced, switch_to=plugin) as fake:
        executor = PyMySQLExecutor(spec(fake.port))
        with pytest.raises(ClearTextAuthRefused) as info:
            executor.run(["SELECT 1"])
    assert "server asked for clear-text password auth" in str(info.value)
    assert "refused without a verified TLS connection" in str(info.value)
    assert info.value.server == f"127.0.0.1:{fake.port}"
    assert SECRET.encode() not in fake.received
    assert fake.received, "the fake server saw the handshake response"


@pytest.mark.parametrize("plugin", CLEAR_TEXT)
def test_clear_text_auth_over_unverified_tls_is_refused(pki: dict, plugin: str) -> None:
    fake = FakeMySQL(switch_to=plugin, tls=server_tls(pki["ip"]))
    with fake, pytest.raises(ClearTextAuthRefused):
        PyMySQLExecutor(spec(fake.port, tls="required")).run(["SELECT 1"])
    assert fake.used_tls
    assert SECRET.encode() not in fake.received


@pytest.mark.parametrize("plugin", CLEAR_TEXT)
def test_clear_text_auth_over_verified_tls_is_allowed(pki: dict, plugin: str) -> None:
    cert = pki["ip"]
    with FakeMySQL(switch_to=plugin, tls=server_tls(cert)) as fake:
        open_connection(
            spec(fake.port, tls="verify_identity", tls_ca_path=str(cert.ca_path))
        ).close()
    assert fake.used_tls
    assert SECRET.encode() + b"\0" in fake.received


@pytest.fixture
def system_cas_are(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Make "the system's CAs" a bundle of ours (OpenSSL reads SSL_CERT_FILE for its default
    paths), with the context cache emptied before and after."""

    def use(bundle: Path) -> None:
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
        monkeypatch.setenv("SSL_CERT_DIR", str(bundle.parent / "no-such-dir"))
        _verifying_context.cache_clear()

    yield use
    _verifying_context.cache_clear()


def test_verify_ca_with_the_system_cas_does_not_allow_clear_text(
    pki: dict, system_cas_are: Callable[[Path], None]
) -> None:
    """Any publicly trusted certificate passes verify_ca against the system CAs (a man in the
    middle can have one for his own name): verified TLS, but not the server we meant."""
    cert = pki["name_only"]  # names db.example.invalid; we dial 127.0.0.1
    system_cas_are(cert.ca_path)
    fake = FakeMySQL(switch_to="mysql_clear_password", tls=server_tls(cert))
    with fake, pytest.raises(ClearTextAuthRefused) as info:
        PyMySQLExecutor(spec(fake.port, tls="verify_ca")).run(["SELECT 1"])
    assert fake.used_tls  # the chain did verify: it is the clear-text rule that refused
    assert "verify_identity" in str(info.value)
    assert SECRET.encode() not in fake.received
    by_ip = pki["ip"]
    system_cas_are(by_ip.ca_path)
    with FakeMySQL(switch_to="mysql_clear_password", tls=server_tls(by_ip)) as fake:
        open_connection(spec(fake.port, tls="verify_identity")).close()
    assert SECRET.encode() + b"\0" in fake.received  # name checked against system CAs: allowed


def test_verify_ca_with_another_ca_fails_clearly(pki: dict) -> None:
    with FakeMySQL(tls=server_tls(pki["ip"])) as fake, pytest.raises(TlsFailed) as info:
        PyMySQLExecutor(spec(fake.port, tls="verify_ca", tls_ca_path=str(pki["other_ca"]))).run(
            ["SELECT 1"]
        )
    assert "certificate was not accepted" in str(info.value)
    assert SECRET.encode() not in fake.received


def test_verify_ca_ignores_the_name_and_verify_identity_checks_it(pki: dict) -> None:
    cert = pki["name_only"]  # right CA, names db.example.invalid; we dial 127.0.0.1
    with FakeMySQL(tls=server_tls(cert), switch_to="mysql_clear_password") as fake:
        open_connection(spec(fake.port, tls="verify_ca", tls_ca_path=str(cert.ca_path))).close()
    assert fake.used_tls
    assert SECRET.encode() + b"\0" in fake.received  # a private CA pins the server: allowed
    with FakeMySQL(tls=server_tls(cert)) as fake, pytest.raises(TlsFailed) as info:
        PyMySQLExecutor(spec(fake.port, tls="verify_identity", tls_ca_path=str(cert.ca_path))).run(
            ["SELECT 1"]
        )
    assert "127.0.0.1" in str(info.value)  # "IP address mismatch, … not valid for '127.0.0.1'"
    assert SECRET.encode() not in fake.received


@pytest.mark.parametrize("mode", ["required", "verify_ca", "verify_identity"])
def test_a_server_without_tls_is_refused_not_spoken_to_in_clear(mode: str) -> None:
    with FakeMySQL(switch_to="mysql_native_password") as fake, pytest.raises(TlsFailed) as info:
        PyMySQLExecutor(spec(fake.port, tls=mode)).run(["SELECT 1"])
    assert "offers no TLS" in str(info.value)
    assert b"mon" not in fake.received  # not even the user name went out


def test_tls_modes_map_onto_ssl_contexts(pki: dict) -> None:
    assert tls_context(ConnectionSpec("db")) is None  # PyMySQL's opportunistic mode
    required = tls_context(ConnectionSpec("db", tls="required"))
    assert required is not None
    assert (required.verify_mode, required.check_hostname) == (ssl.CERT_NONE, False)
    ca = str(pki["ip"].ca_path)
    verify_ca = tls_context(ConnectionSpec("db", tls="verify_ca", tls_ca_path=ca))
    assert verify_ca is not None
    assert (verify_ca.verify_mode, verify_ca.check_hostname) == (ssl.CERT_REQUIRED, False)
    identity = tls_context(ConnectionSpec("db", tls="verify_identity"))  # system CAs
    assert identity is not None
    assert (identity.verify_mode, identity.check_hostname) == (ssl.CERT_REQUIRED, True)


def test_an_unloadable_ca_bundle_names_the_path_and_nothing_else(tmp_path: Path) -> None:
    garbage = tmp_path / "not-a-ca.pem"
    garbage.write_text("hello")
    for path in (tmp_path / "missing.pem", garbage):
        with pytest.raises(TlsFailed) as info:
            tls_context(ConnectionSpec("db", tls="verify_ca", tls_ca_path=str(path)))
        assert str(path) in str(info.value)
        assert "No such file" not in str(info.value)


def test_translate_error_tells_tls_from_unreachable() -> None:
    required = pymysql.err.OperationalError(2026, "SSL is required but the server doesn't")
    assert type(translate_error("db:3306", required)) is TlsFailed
    wrapped = pymysql.err.OperationalError(2003, "Can't connect to MySQL server on 'db'")
    wrapped.original_exception = ssl.SSLCertVerificationError(1, "certificate verify failed")  # type: ignore[attr-defined]
    assert type(translate_error("db:3306", wrapped)) is TlsFailed
    plain = pymysql.err.OperationalError(2003, "Can't connect to MySQL server on 'db'")
    plain.original_exception = ConnectionRefusedError(111, "refused")  # type: ignore[attr-defined]
    assert type(translate_error("db:3306", plain)) is ServerUnreachable


def test_a_ca_path_is_bounded_by_the_ca_directory(tmp_path: Path) -> None:
    ca_dir = tmp_path / "ca"
    ca_dir.mkdir()
    (ca_dir / "escape.pem").symlink_to(tmp_path)
    check_tls_setting("verify_ca", str(ca_dir / "lab.pem"), str(ca_dir))
    check_tls_setting("verify_ca", "/etc/passwd", None)  # the operator's CLI: no bound
    check_tls_setting("verify_ca", "/etc/passwd", "")  # LAGSCOPE_TLS_CA_DIR="" : no bound
    for outside in (
        "/etc/passwd",
        f"{ca_dir}/../x.pem",
        f"{ca_dir}/escape.pem/x.pem",
        f"{ca_dir}x",
    ):
        with pytest.raises(InvalidInput, match="LAGSCOPE_TLS_CA_DIR"):
            check_tls_setting("verify_ca", outside, str(ca_dir))
