"""Unit tests for :mod:`lagscope.config`."""
