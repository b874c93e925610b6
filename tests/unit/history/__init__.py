"""Unit tests for :mod:`lagscope.history`."""
