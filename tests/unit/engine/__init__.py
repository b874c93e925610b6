"""Unit tests for :mod:`lagscope.engine`."""
