"""Fakes shared by the unit tests (and some integration tests): a recorded-answers executor
and protocol-level fake MySQL/MariaDB servers on loopback."""
