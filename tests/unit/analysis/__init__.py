"""Unit tests for :mod:`lagscope.analysis` (pure functions, no server)."""
