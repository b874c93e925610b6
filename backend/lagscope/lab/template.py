"""A fresh datadir for each lab server, copied from a template bootstrapped once per MariaDB
version.

The template is made by ``mariadb-install-db`` and cached under ``$XDG_CACHE_HOME/lagscope``
(``~/.cache/lagscope``): bootstrapping takes about a second, a copy about a tenth of that, which
is most of why a lab starts in a couple of seconds.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from lagscope.lab.binaries import find_binary, mariadbd_version
from lagscope.lab.errors import LabError

if TYPE_CHECKING:
    from lagscope.lab.servers import LabServer

# Bump when the template's recipe changes, so stale caches are not reused.
TEMPLATE_RECIPE = 1
# Small on purpose: three servers share a 2-core box with the product under test. The redo log
# size is baked into the template and must match at every start, or InnoDB resizes it (slow).
INNODB_OPTIONS = ("--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M")
# mariadbd's own limit for sun_path is 107 bytes; stay clear of it with room for ".lock" suffixes.
MAX_SOCKET_PATH = 100
_TEMPLATE_CLEANUP_SQL = (
    # install-db also creates root@<hostname>, root@127.0.0.1 and root@::1 without a password;
    # only the socket account is wanted (the lab creates its own password users).
    "DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';\n"
    "DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';\n"
)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lagscope"


def ensure_template() -> Path:
    """The cached, bootstrapped datadir for this MariaDB version; built on first use.

    Builders serialise on a lock file and publish with an atomic rename, so parallel test runs
    never copy a half-built template.
    """
    safe_version = re.sub(r"[^A-Za-z0-9.+-]", "_", mariadbd_version())
    final = cache_root() / f"lab-template-{safe_version}-r{TEMPLATE_RECIPE}"
    if (final / "mysql").is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / ".lab-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "mysql").is_dir():
            return final
        for stale in final.parent.glob(".building-*"):  # left by a builder that died
            shutil.rmtree(stale, ignore_errors=True)
        build = Path(tempfile.mkdtemp(prefix=".building-", dir=final.parent))
        try:
            _bootstrap(build)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(build / "data", final)
        finally:
            shutil.rmtree(build, ignore_errors=True)
    return final


def _bootstrap(build: Path) -> None:
    extra = build / "cleanup.sql"
    extra.write_text(_TEMPLATE_CLEANUP_SQL)
    argv = [
        find_binary("mariadb-install-db", "mysql_install_db"),
        "--no-defaults",
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        f"--datadir={build / 'data'}",
        f"--extra-file={extra}",
        *INNODB_OPTIONS,
    ]
    if os.geteuid() == 0:
        argv.append("--user=root")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise LabError(
            f"mariadb-install-db failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )


def create_datadir(server: LabServer, template: Path) -> None:
    if len(str(server.socket)) > MAX_SOCKET_PATH:
        raise LabError(f"socket path too long for a unix socket: {server.socket}")
    server.dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template, server.datadir, symlinks=True)
