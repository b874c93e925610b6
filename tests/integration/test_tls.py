"""Per-instance TLS against a real MariaDB started with its own self-signed CA.

The TLS lab's source offers TLS with a certificate from a CA made for this module, naming only
``localhost``: dialling 127.0.0.1 with verify_identity must fail, dialling localhost must pass.
The session lab (tests/conftest.py) offers no TLS at all (MariaDB 10.11 makes no certificate of
its own). The TLS lab's source also loads MariaDB's PAM plugin with ``pam_use_cleartext_plugin``,
so an account ``IDENTIFIED VIA pam`` makes the real server ask for ``mysql_clear_password``. No PAM
service accepts it here (that needs a file in /etc/pam.d), so the best such a login can get is
the server's own refusal; the byte-level "nothing was sent" check is the fake server's (unit).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lagscope.collectors.connection import ConnectionSpec, TlsMode
from lagscope.collectors.executor import PyMySQLExecutor
from lagscope.collectors.heartbeat_writer import HeartbeatWriter
from lagscope.collectors.poller import InstancePoller
from lagscope.collectors.targets import AllowList
from lagscope.errors import AccessDenied, ClearTextAuthRefused, TlsFailed
from lagscope.ingest.heartbeat import writer_plans
from lagscope.inventory.instances import connection_spec
from lagscope.lab import Lab, LabConfig, servers
from lagscope.lab.certs import make_ca
from lagscope.models import Instance
from lagscope.security.secret_box import store_box

from .api_stack import ApiServer, api_server, sqlite_url

pytestmark = pytest.mark.integration


@dataclass
class TlsLab:
    lab: Lab
    ca_path: Path
    other_ca_path: Path

    def spec(
        self, host: str = "127.0.0.1", user: tuple[str, str] | None = None, **kwargs: object
    ) -> ConnectionSpec:
        login, password = user or self.lab.credentials.monitor
        return ConnectionSpec(
            host,
            self.lab.source.port,
            login,
            password,
            connect_timeout_s=10,
            read_timeout_s=10,
            **kwargs,  # type: ignore[arg-type]
        )


@pytest.fixture(scope="module")
def tls_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsLab]:
    directory = tmp_path_factory.mktemp("tls-pki")
    ca = make_ca(directory, "lab-ca")
    cert = ca.issue("source", ["localhost"])
    other = make_ca(directory, "other-ca")
    # MariaDB's PAM plugin (v1: PAM in the server process) asking for mysql_clear_password: a
    # real server that wants the password in clear. "loose": a build without it still starts.
    pam = ("--plugin-load-add=auth_pam_v1", "--loose-pam-use-cleartext-plugin=ON")
    lab = Lab.start(LabConfig(replicas=0, source_options=(*cert.mariadbd_options(), *pam)))
    try:
        yield TlsLab(lab, ca.cert_path, other.cert_path)
    finally:
        lab.stop()


@pytest.fixture(scope="module")
def api(tls_lab: TlsLab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    # The lab's CA bundles are the only files an instance's tls_ca_path may name.
    ca_dir = str(tls_lab.ca_path.parent)
    with api_server(sqlite_url(tmp_path_factory.mktemp("api-tls")), tls_ca_dir=ca_dir) as server:
        yield server


def query(spec: ConnectionSpec, sql: str) -> tuple[tuple[object, ...], ...]:
    executor = PyMySQLExecutor(spec)
    try:
        return executor.run([sql])[0].rows
    finally:
        executor.close()


def cipher(spec: ConnectionSpec) -> str:
    rows = query(spec, "SHOW SESSION STATUS LIKE 'Ssl_cipher'")
    return str(rows[0][1]) if rows else ""


def test_verify_ca_with_the_right_ca_gives_an_encrypted_session(tls_lab: TlsLab) -> None:
    # The certificate names localhost, not 127.0.0.1: verify_ca does not look at names.
    assert cipher(tls_lab.spec(tls="verify_ca", tls_ca_path=str(tls_lab.ca_path)))


def test_verify_ca_with_another_ca_fails_clearly(tls_lab: TlsLab) -> None:
    with pytest.raises(TlsFailed) as info:
        cipher(tls_lab.spec(tls="verify_ca", tls_ca_path=str(tls_lab.other_ca_path)))
    assert "certificate was not accepted" in str(info.value)
    assert "certificate verify failed" in str(info.value) or "self" in str(info.value)


def test_verify_identity_needs_the_name_on_the_certificate(tls_lab: TlsLab) -> None:
    with pytest.raises(TlsFailed) as info:
        cipher(tls_lab.spec(tls="verify_identity", tls_ca_path=str(tls_lab.ca_path)))
    assert "127.0.0.1" in str(info.value)  # IP address mismatch, not valid for '127.0.0.1'
    by_name = tls_lab.spec("localhost", tls="verify_identity", tls_ca_path=str(tls_lab.ca_path))
    assert cipher(by_name)


def test_verify_without_a_ca_path_uses_the_system_cas(tls_lab: TlsLab) -> None:
    """The lab CA is in no system bundle: the chain fails, which shows the system CAs were used
    (and that no path does not mean "no check")."""
    with pytest.raises(TlsFailed):
        cipher(tls_lab.spec("localhost", tls="verify_identity"))


def test_preferred_encrypts_when_offered_and_not_otherwise(tls_lab: TlsLab, lab: Lab) -> None:
    assert cipher(tls_lab.spec())  # default: preferred
    user, password = lab.credentials.monitor
    plain = ConnectionSpec("127.0.0.1", lab.source.port, user, password, connect_timeout_s=10)
    assert cipher(plain) == ""


@pytest.mark.parametrize("mode", ["required", "verify_ca", "verify_identity"])
def test_a_server_without_tls_is_refused_under_required_and_verify(lab: Lab, mode: TlsMode):
    user, password = lab.credentials.monitor
    spec = ConnectionSpec("127.0.0.1", lab.source.port, user, password, tls=mode)
    with pytest.raises(TlsFailed) as info:
        cipher(spec)
    assert "the server offers no TLS" in str(info.value)


def test_the_normal_password_login_still_works_under_required(tls_lab: TlsLab) -> None:
    """mysql_native_password (the lab accounts) through the whole poll, TLS unverified."""
    poller = InstancePoller(PyMySQLExecutor(tls_lab.spec(tls="required")))
    try:
        snapshot = poller.poll()
    finally:
        poller.close()
    assert snapshot.flavor.product == "mariadb"


def test_connection_test_uses_the_tls_given(tls_lab: TlsLab, api: ApiServer) -> None:
    user, password = tls_lab.lab.credentials.monitor
    body = {
        "host": "localhost",
        "port": tls_lab.lab.source.port,
        "user": user,
        "password": password,
        "timeout_s": 10,
        "tls": "verify_identity",
        "tls_ca_path": str(tls_lab.ca_path),
    }
    with api.client() as c:
        ok = c.post("/api/v1/instances/test", json=body)
        assert ok.status_code == 200, ok.text
        wrong = c.post(
            "/api/v1/instances/test", json={**body, "tls_ca_path": str(tls_lab.other_ca_path)}
        )
        assert wrong.status_code == 502, wrong.text
        assert wrong.json()["title"] == "TlsFailed"
        assert "certificate was not accepted" in wrong.json()["detail"]
        mixed = c.post("/api/v1/instances/test", json={**body, "tls": "required"})
        assert mixed.status_code == 422 and "tls_ca_path" in mixed.json()["detail"]


def test_stored_tls_settings_reach_polls_and_the_heartbeat_writer(
    tls_lab: TlsLab, api: ApiServer
) -> None:
    user, password = tls_lab.lab.credentials.monitor
    hb_user, hb_password = tls_lab.lab.credentials.heartbeat
    with api.client() as c:
        cid = c.post(
            "/api/v1/clusters",
            json={
                "name": "tls-stored",
                "heartbeat": {"mode": "lagscope", "user": hb_user, "password": hb_password},
            },
        ).json()["id"]
        created = c.post(
            "/api/v1/instances",
            json={
                "cluster_id": cid,
                "name": "source",
                "host": "localhost",
                "port": tls_lab.lab.source.port,
                "user": user,
                "password": password,
                "role": "source",
                "tls": "verify_identity",
                "tls_ca_path": str(tls_lab.ca_path),
            },
        )
        assert created.status_code == 201, created.text
        assert created.json()["tls"] == "verify_identity"
        assert created.json()["tls_ca_path"] == str(tls_lab.ca_path)
    box = store_box(api.sessions, api.settings.secret_key)
    with api.sessions() as session:
        instance = session.get(Instance, created.json()["id"])
        assert instance is not None
        spec = connection_spec(box, instance, 10.0, 10.0)
        (plan,) = [p for p in writer_plans(session, box) if p.cluster_id == cid]
    assert (spec.tls, spec.tls_ca_path) == ("verify_identity", str(tls_lab.ca_path))
    assert (plan.spec.tls, plan.spec.tls_ca_path) == ("verify_identity", str(tls_lab.ca_path))
    assert cipher(spec)
    writer = HeartbeatWriter(plan.spec)  # the writer's login: verified TLS to "localhost"
    try:
        writer.beat()
    finally:
        writer.close()
    assert query(spec, "SELECT COUNT(*) FROM lagscope.heartbeat") == ((1,),)


def test_tls_settings_are_validated_and_weakening_needs_the_password(api: ApiServer) -> None:
    ca_dir = api.settings.tls_ca_dir
    with api.client() as c:
        cid = c.post("/api/v1/clusters", json={"name": "tls-patch"}).json()["id"]
        base = {"cluster_id": cid, "host": "10.0.0.9", "user": "mon", "password": "pw-1"}
        for bad, word in (
            ({"tls": "verify_full"}, "tls"),
            ({"tls": "required", "tls_ca_path": f"{ca_dir}/ca.pem"}, "tls_ca_path"),
            ({"tls": "verify_ca", "tls_ca_path": "ca.pem"}, "absolute"),
            ({"tls": "verify_ca", "tls_ca_path": "/etc/ca\n.pem"}, "tls_ca_path"),
        ):
            refused = c.post("/api/v1/instances", json={**base, "name": "x", **bad})
            assert refused.status_code == 422, (bad, refused.text)
            assert word in refused.text
        made = c.post("/api/v1/instances", json={**base, "name": "db"}).json()
        assert (made["tls"], made["tls_ca_path"]) == ("preferred", None)
        url = f"/api/v1/instances/{made['id']}"
        # Stronger needs no password; the system CAs stay in use without a path.
        stronger = c.patch(url, json={"tls": "verify_identity"})
        assert stronger.status_code == 200, stronger.text
        assert stronger.json()["tls"] == "verify_identity"
        for weaker in ({"tls": "required"}, {"tls_ca_path": f"{ca_dir}/other-ca.pem"}):
            refused = c.patch(url, json=weaker)
            assert refused.status_code == 422, refused.text
            assert "needs the password again" in refused.json()["detail"]
        assert c.get(url).json()["tls"] == "verify_identity"
        with_ca = c.patch(url, json={"tls_ca_path": f"{ca_dir}/ca.pem", "password": "pw-2"})
        assert with_ca.status_code == 200, with_ca.text
        assert with_ca.json()["tls_ca_path"] == f"{ca_dir}/ca.pem"
        # Dropping the private CA for the system's (far more issuers) is a change of trust too.
        dropped = c.patch(url, json={"tls_ca_path": ""})
        assert dropped.status_code == 422 and "tls_ca_path" in dropped.json()["detail"]
        # Back to required: the CA path must go too ("" removes it), and the password again.
        mixed = c.patch(url, json={"tls": "required", "password": "pw-2"})
        assert mixed.status_code == 422 and "tls_ca_path" in mixed.json()["detail"]
        down = c.patch(url, json={"tls": "required", "tls_ca_path": "", "password": "pw-2"})
        assert down.status_code == 200, down.text
        assert (down.json()["tls"], down.json()["tls_ca_path"]) == ("required", None)


def test_verify_identity_still_checks_the_name_behind_the_allow_list(tls_lab: TlsLab) -> None:
    """With LAGSCOPE_ALLOWED_TARGETS the socket goes to the checked address, never the name
    again (DNS rebinding); the certificate must still be checked against the name."""
    fenced = AllowList.parse("127.0.0.0/8, ::1")
    ca = str(tls_lab.ca_path)
    assert cipher(tls_lab.spec("localhost", tls="verify_identity", tls_ca_path=ca, allowed=fenced))
    with pytest.raises(TlsFailed):
        cipher(tls_lab.spec("127.0.0.1", tls="verify_identity", tls_ca_path=ca, allowed=fenced))


def test_a_clear_text_account_gets_its_password_only_over_verified_tls(tls_lab: TlsLab) -> None:
    with servers.root_connection(tls_lab.lab.source) as conn, conn.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM information_schema.plugins WHERE plugin_name = 'pam'")
        row = cur.fetchone()
        if not row or not row[0]:
            pytest.skip("this MariaDB build has no auth_pam_v1 plugin")
        cur.execute("CREATE USER IF NOT EXISTS 'lgs_pam'@'%' IDENTIFIED VIA pam USING 'lgs-none'")
    user = ("lgs_pam", "pam-pw-1")
    ca = str(tls_lab.ca_path)
    for tls in ("preferred", "required"):  # TLS either way here, but unverified
        with pytest.raises(ClearTextAuthRefused):
            PyMySQLExecutor(tls_lab.spec(tls=tls, user=user)).run(["SELECT 1"])
    # Verified: the password goes, and it is PAM (no service set up for it) that says no.
    for host, tls in (("localhost", "verify_identity"), ("127.0.0.1", "verify_ca")):
        with pytest.raises(AccessDenied) as info:
            spec = tls_lab.spec(host, tls=tls, tls_ca_path=ca, user=user)
            PyMySQLExecutor(spec).run(["SELECT 1"])
        assert info.value.code == 1045


def test_a_ca_path_must_lie_in_the_ca_directory(tls_lab: TlsLab, api: ApiServer) -> None:
    """The workers read tls_ca_path: outside LAGSCOPE_TLS_CA_DIR it would let an editor probe
    any file on their machines, also through a symbolic link or "..", and in a test."""
    ca_dir = Path(api.settings.tls_ca_dir)
    link = ca_dir / "passwd.pem"
    link.symlink_to("/etc/passwd")
    user, password = tls_lab.lab.credentials.monitor
    try:
        with api.client() as c:
            cid = c.post("/api/v1/clusters", json={"name": "tls-dir"}).json()["id"]
            base = {"cluster_id": cid, "host": "10.0.0.9", "user": "mon", "password": "pw-1"}
            for outside in ("/etc/passwd", str(link), f"{ca_dir}/../../../etc/passwd"):
                body = {**base, "name": "x", "tls": "verify_ca", "tls_ca_path": outside}
                refused = c.post("/api/v1/instances", json=body)
                assert refused.status_code == 422, (outside, refused.text)
                assert "LAGSCOPE_TLS_CA_DIR" in refused.json()["detail"]
                probe = {
                    "host": "localhost",
                    "port": tls_lab.lab.source.port,
                    "user": user,
                    "password": password,
                    "tls": "verify_ca",
                    "tls_ca_path": outside,
                }
                tested = c.post("/api/v1/instances/test", json=probe)
                assert tested.status_code == 422, (outside, tested.text)
            made = c.post("/api/v1/instances", json={**base, "name": "db", "enabled": False})
            assert made.status_code == 201, made.text
            assert made.json()["enabled"] is False  # as asked, not silently enabled
            moved = c.patch(
                f"/api/v1/instances/{made.json()['id']}",
                json={"tls": "verify_ca", "tls_ca_path": "/etc/passwd", "password": "pw-1"},
            )
            assert moved.status_code == 422 and "LAGSCOPE_TLS_CA_DIR" in moved.text
            kept = c.get(f"/api/v1/instances/{made.json()['id']}").json()
            assert (kept["tls"], kept["tls_ca_path"]) == ("preferred", None)
    finally:
        link.unlink()
