"""Unit tests for :mod:`lagscope.models`."""
