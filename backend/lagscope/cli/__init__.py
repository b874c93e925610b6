"""The ``lagscope`` command line (``lagscope.cli:main``, and ``python -m lagscope``).

One module per command group: ``root`` (the group, its audit trail, the shared helpers),
``probe``, ``store`` (``migrate``, ``import``, ``annotate``), ``processes`` (``worker``,
``beat``, ``heartbeat``, ``api``, ``health``), ``users`` (``user``, ``check-token``),
``secret_keys`` (``secrets``) and ``demo`` (``demo``, ``scenario``); the lab's own group
(``lagscope lab …``) comes from ``lagscope.lab.cli``. Importing a module registers its commands on
:func:`main`, so each is imported here.
"""

from __future__ import annotations

from lagscope.cli import demo, probe, processes, secret_keys, store, users
from lagscope.cli.root import main


def _mount_lab() -> None:
    try:
        from lagscope.lab.cli import lab
    except ImportError:  # the lab package is optional at import time during development
        return
    main.add_command(lab)


_mount_lab()

__all__ = ["demo", "main", "probe", "processes", "secret_keys", "store", "users"]
