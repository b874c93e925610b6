"""Unit tests for :mod:`lagscope.series_store`."""
