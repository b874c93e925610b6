"""Unit tests for :mod:`lagscope.ingest`."""
