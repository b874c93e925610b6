"""Where an import file may take a password from, besides the file itself.

An import file may come from elsewhere (a repository, a colleague, a pipeline), while
``lagscope import`` runs with the operator's environment and files, LAGSCOPE_SECRET_KEY
among them. A file naming ``password_env: LAGSCOPE_SECRET_KEY`` and a host of its author's
would send that key there as the monitor's password. So a variable must carry
:data:`ENV_PREFIX` (and be no setting of Lagscope's), and a password file must lie in one
directory (``LAGSCOPE_PASSWORD_FILE_DIR``, Docker's and Kubernetes' ``/run/secrets`` by default),
judged after symbolic links and ``..`` are resolved; only a regular file's first
``MAX_PASSWORD_BYTES`` are read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

from lagscope.config import Settings

ENV_PREFIX = "LAGSCOPE_IMPORT_"
# A password, not a file's worth of anything.
MAX_PASSWORD_BYTES = 4096


def env_refusal(name: str) -> str | None:
    """Why ``password_env: name`` may not be read, or None."""
    if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX:
        return (
            f"password_env: {name} is not read: only variables named {ENV_PREFIX}… are "
            "(rename it, e.g. export " + ENV_PREFIX + "SHOP_DB1=…)"
        )
    if name.removeprefix("LAGSCOPE_").lower() in Settings.model_fields:
        return f"password_env: {name} is one of Lagscope's settings, not a password"
    return None


def env_password(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The variable's value; ValueError saying why not."""
    if refusal := env_refusal(name):
        raise ValueError(refusal)
    env = os.environ if environ is None else environ
    if name not in env:
        raise ValueError(f"password_env: the variable {name} is not set")
    return env[name]


def file_password(path: str, directory: str) -> str:
    """The password in ``path`` (one trailing newline is the file's, not the password's:
    ``echo … > file``); ValueError saying why not."""
    if not directory:
        raise ValueError(
            "password_file is not accepted: LAGSCOPE_PASSWORD_FILE_DIR is empty (set it to the "
            "directory that holds the password files)"
        )
    inside = os.path.realpath(directory)
    real = os.path.realpath(path)
    if not os.path.isabs(path) or os.path.commonpath([real, inside]) != inside:
        raise ValueError(
            f"password_file: {path} is not read: password files must be inside {directory} "
            "(LAGSCOPE_PASSWORD_FILE_DIR; an absolute path, symbolic links and .. resolved)"
        )
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ValueError(f"password_file: {path} is not a regular file")
            raw = os.read(fd, MAX_PASSWORD_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise ValueError(f"password_file: cannot read {path}: {exc.strerror}") from exc
    if len(raw) > MAX_PASSWORD_BYTES:
        raise ValueError(f"password_file: {path} is larger than {MAX_PASSWORD_BYTES} bytes")
    try:
        return raw.decode("utf-8").removesuffix("\n")
    except UnicodeDecodeError as exc:
        raise ValueError(f"password_file: {path} is not UTF-8 text") from exc
