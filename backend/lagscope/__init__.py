"""Lagscope: why a MySQL/MariaDB replica is behind, and which tuning change fixed it."""

__version__ = "0.1.0"
