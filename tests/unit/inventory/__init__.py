"""Unit tests for :mod:`lagscope.inventory`."""
