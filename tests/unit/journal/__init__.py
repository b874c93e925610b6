"""Unit tests for :mod:`lagscope.journal`."""
