"""Settings refuse unsafe defaults; the Alembic environment runs and matches the models."""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from lagscope.config import Settings

ROOT = Path(__file__).resolve().parents[3]


def test_placeholder_secret_refused_outside_demo(monkeypatch):
    monkeypatch.delenv("LAGSCOPE_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="LAGSCOPE_SECRET_KEY"):
        Settings(demo=False)
    assert Settings(demo=True).demo


STRONG = "q7Vd3kPz_Lr9XbN2mT5wYc8HgJ4sFe6A"  # 32 random URL-safe characters


def test_demo_mode_with_a_real_key_is_refused(monkeypatch):
    monkeypatch.delenv("LAGSCOPE_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="refused together with a real LAGSCOPE_SECRET_KEY"):
        Settings(demo=True, secret_key=STRONG)
    assert Settings(demo=False, secret_key=STRONG).secret_key == STRONG


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("short-but-random-Xq7", "characters, at least 32"),
        ("a" * 48, "zxcvbn"),
        ("abcd" * 12, "zxcvbn"),
        ("01" * 30, "zxcvbn"),
        # Seen once: these passed the home-made entropy rule.
        ("0123456789" * 4, "zxcvbn"),
        ("Summer2026!Summer2026!Summer2026!", "zxcvbn"),
        ("LagscopeProductionMysqlSecret2026", "zxcvbn"),
        ("qwertyuiopasdfghjklzxcvbnm1234567890", "zxcvbn"),
        ("correct horse battery staple orange", "zxcvbn"),
        ("0123456789" * 8 + secrets.token_urlsafe(32), "zxcvbn"),  # judged on its first 72
    ],
)
def test_weak_secret_keys_are_refused_outside_demo(key, why):
    with pytest.raises(ValidationError, match=why) as refused:
        Settings(demo=False, secret_key=key)
    assert "lagscope secrets generate-key" in str(refused.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    "generate",
    [
        lambda: secrets.token_urlsafe(32),
        lambda: secrets.token_hex(16),
        lambda: secrets.token_hex(32),
    ],
)
def test_generated_keys_pass(generate):
    # token_hex(16) is the shortest usual random key (32 characters, 128 bits): zxcvbn rates a
    # random character as 10 guesses, so it scores ~10^27-10^32, above the 10^26 needed.
    for _ in range(100):
        Settings(demo=False, secret_key=generate())


def test_generate_key_prints_a_key_the_settings_accept():
    from click.testing import CliRunner

    from lagscope.cli import main

    keys = set()
    for _ in range(3):
        result = CliRunner().invoke(main, ["secrets", "generate-key"])
        assert result.exit_code == 0, result.output
        key = result.output.strip()
        assert len(key) >= 43 and key not in keys
        keys.add(key)
        assert Settings(demo=False, secret_key=key).secret_key == key


def test_demo_binds_to_loopback_only_unless_allowed(monkeypatch):
    from lagscope.config import is_loopback, require_loopback_or_allowed

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "10.0.0.5", "::", "example.com"))
    monkeypatch.delenv("LAGSCOPE_DEMO_ALLOW_REMOTE", raising=False)
    require_loopback_or_allowed("127.0.0.1")
    with pytest.raises(ValueError, match="loopback only"):
        require_loopback_or_allowed("0.0.0.0")
    monkeypatch.setenv("LAGSCOPE_DEMO_ALLOW_REMOTE", "1")
    require_loopback_or_allowed("0.0.0.0")


def test_database_url_shorthands_are_normalised():
    s = Settings(demo=True, database_url="postgres://u@h/db")
    assert s.database_url == "postgresql+psycopg://u@h/db"
    assert (
        Settings(demo=True, database_url=" mysql://u@h/db").database_url == "mysql+pymysql://u@h/db"
    )


def alembic(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "alembic", "-x", f"url={url}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_alembic_upgrade_and_check_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade = alembic("upgrade", "head", url=url)
    assert upgrade.returncode == 0, upgrade.stderr
    check = alembic("check", url=url)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "No new upgrade operations detected" in check.stdout + check.stderr
    down = alembic("downgrade", "base", url=url)
    assert down.returncode == 0, down.stderr
    again = alembic("upgrade", "head", url=url)
    assert again.returncode == 0, again.stderr


def test_api_command_refuses_demo_mode_on_a_public_address(monkeypatch):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("LAGSCOPE_")}
    refused = subprocess.run(
        [sys.executable, "-m", "lagscope", "api", "--host", "0.0.0.0", "--port", "1"],
        env={**env, "LAGSCOPE_DEMO": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "loopback only" in refused.stderr, refused.stderr


def test_trusted_proxies_are_addresses_or_networks():
    settings = Settings(demo=True, trusted_proxies=" 10.0.0.7, 192.168.0.0/24 ,::1")
    assert settings.trusted_proxy_list() == ["10.0.0.7/32", "192.168.0.0/24", "::1/128"]
    assert Settings(demo=True).trusted_proxy_list() == []
    with pytest.raises(ValidationError, match="not an address or a CIDR"):
        Settings(demo=True, trusted_proxies="proxy.internal")


def test_demo_mode_refuses_every_old_key(monkeypatch):
    """Seen once: a real key passed as an old one opened a real store's credentials."""
    monkeypatch.delenv("LAGSCOPE_SECRET_KEY", raising=False)
    with pytest.raises(ValidationError, match="LAGSCOPE_OLD_SECRET_KEYS"):
        Settings(demo=True, old_secret_keys=STRONG)
    assert Settings(demo=True, old_secret_keys=" , ").demo
