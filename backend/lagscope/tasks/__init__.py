"""Celery: the app, the beat schedule, and thin tasks over the contexts."""
