"""Unit tests for :mod:`lagscope.tasks`."""
