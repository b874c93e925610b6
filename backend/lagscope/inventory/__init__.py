"""What is monitored and how to reach it: clusters and instances as editors change them, the
connection test, and the login state of each monitored server (back-off after a refused login,
the heartbeat writer's password bound to its source).

Imports :mod:`lagscope.security` (the secret box) and nothing of the contexts above it."""
