"""Unit tests for :mod:`lagscope.collectors`."""
