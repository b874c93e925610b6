"""Unit tests for :mod:`lagscope.analysis.causes`."""
