"""Lagscope: why a MySQL/MariaDB replica is behind, and which tuning change fixed it.

The use-cases live in bounded contexts, each a package: ``security``, ``inventory``, ``ingest``,
``history``, ``journal`` and ``alerts``, over the floors that do no store I/O (``collectors``,
``analysis``, the pure alert core) and under the edges (``api``, ``tasks``, ``cli``). Imports run
only downwards (tests/unit/repo/test_layering.py draws the floors). A use-case flushes and never
commits: whoever opened the session (a route, a task, a test) owns the transaction.
"""

__version__ = "0.1.0"
