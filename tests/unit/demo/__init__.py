"""Unit tests for :mod:`lagscope.demo`."""
