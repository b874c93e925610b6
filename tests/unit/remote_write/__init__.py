"""Unit tests for :mod:`lagscope.remote_write`."""
