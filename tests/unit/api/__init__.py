"""Unit tests for :mod:`lagscope.api`."""
