"""Who may do what: users and their tokens, signing in and its throttle, the secret box that
encrypts stored credentials, key rotation, and the demo store's mark.

Use-cases flush, never commit: whoever opened the session (a route, a task, a test) owns the
transaction (``login`` is the exception and says why). Imports nothing of the other contexts."""
