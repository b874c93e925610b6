"""The programs the lab runs: mariadbd (its version names the cached template), the install
script, and libfaketime for a server whose clock runs shifted.

Found on PATH and in the sbin directories, since Debian puts mariadbd where a non-root PATH does
not look.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from lagscope.lab.errors import LabError


def find_binary(*names: str) -> str:
    # /usr/sbin is not on a non-root PATH on Debian, which is where mariadbd lives.
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    for name in names:
        found = shutil.which(name, path=search)
        if found:
            return found
    raise LabError(f"none of {', '.join(names)} is installed (MariaDB server binaries needed)")


@functools.cache
def mariadbd_path() -> str:
    return find_binary("mariadbd", "mysqld")


@functools.cache
def mariadbd_version() -> str:
    """E.g. ``10.11.19-MariaDB-0+deb12u1`` (from ``mariadbd --version``)."""
    out = subprocess.run(
        [mariadbd_path(), "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    match = re.search(r"Ver\s+(\S+)", out)
    if not match:
        raise LabError(f"cannot read the version from {out!r}")
    return match.group(1)


_LIBFAKETIME_GLOBS = ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1")


def libfaketime_path() -> str:
    """Debian's libfaketime (package ``faketime``): shifts a whole process's clock."""
    for pattern in _LIBFAKETIME_GLOBS:
        found = sorted(Path("/").glob(pattern.lstrip("/")))
        if found:
            return str(found[0])
    raise LabError(
        "libfaketime is not installed (Debian package faketime, `make system-deps`):"
        " a lab server cannot run with a shifted clock"
    )
