"""Unit tests for :mod:`lagscope.lab`."""
