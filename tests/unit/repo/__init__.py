"""Unit tests about the whole repository: layering, the architecture map, the docs and their
links, the configuration table, the metric catalog, the Makefile lanes, deploy files and the
OpenAPI client."""
