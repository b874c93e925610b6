"""Unit tests for :mod:`lagscope.security`."""
