"""Unit tests for :mod:`lagscope.health`."""
