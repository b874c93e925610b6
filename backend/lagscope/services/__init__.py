"""Use-cases that combine collectors, the store and analysis. Services flush, never commit:
whoever opened the session (a route, a task, a test) owns the transaction."""
