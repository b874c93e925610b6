"""A throw-away certificate authority and server certificates, for TLS tests of the lab.

``make_ca`` writes a self-signed CA; ``CertificateAuthority.issue`` a server certificate signed by
it, naming the hosts given as subject alternative names (IP addresses as IP SANs, anything else
as DNS names). Everything is PEM in the directory given, keys unencrypted (mariadbd reads them
at start without a passphrase). Never meant for anything but a lab: short-lived, 2048-bit RSA
(what every MariaDB and MySQL TLS library accepts), no revocation.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Valid from an hour ago (a lab server's clock and ours are the same, but a test machine's
# clock may step), for a week: long enough for any test run, short enough to never matter.
_NOT_BEFORE = timedelta(hours=1)
_LIFETIME = timedelta(days=7)


@dataclass(frozen=True)
class ServerCertificate:
    cert_path: Path
    key_path: Path
    ca_path: Path

    def mariadbd_options(self) -> tuple[str, ...]:
        """The flags that make mariadbd offer TLS with this certificate."""
        return (
            f"--ssl-cert={self.cert_path}",
            f"--ssl-key={self.key_path}",
            f"--ssl-ca={self.ca_path}",
        )


@dataclass(frozen=True)
class CertificateAuthority:
    directory: Path
    name: str
    cert_path: Path
    _key: rsa.RSAPrivateKey
    _cert: x509.Certificate

    def issue(self, stem: str, hosts: Sequence[str]) -> ServerCertificate:
        """A server certificate named ``hosts`` (SANs), written as ``<stem>.pem``/``-key.pem``."""
        key = _new_key()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{stem} (lagscope lab)")])
        now = datetime.now(UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _NOT_BEFORE)
            .not_valid_after(now + _LIFETIME)
            .add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                critical=False,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .sign(self._key, hashes.SHA256())
        )
        cert_path = self.directory / f"{stem}.pem"
        key_path = self.directory / f"{stem}-key.pem"
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
        _write(key_path, _key_pem(key))
        return ServerCertificate(cert_path, key_path, self.cert_path)


def make_ca(directory: Path | str, name: str = "lagscope-lab-ca") -> CertificateAuthority:
    """A new self-signed CA, its certificate at ``<directory>/<name>.pem``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    key = _new_key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _NOT_BEFORE)
        .not_valid_after(now + _LIFETIME)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / f"{name}.pem"
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return CertificateAuthority(directory, name, cert_path, key, cert)


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _write(path: Path, data: bytes) -> None:
    # 0600: a private key, even a lab's, is not for other users of the machine.
    path.touch(mode=0o600, exist_ok=True)
    path.write_bytes(data)
