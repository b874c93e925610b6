"""Alerts (DESIGN.md §8): rule evaluation state machine, payload formats, signing.

Everything here is pure (no I/O): the store, the Celery delivery task and the API build on it.
"""
