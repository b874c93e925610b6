"""Who may do what: users and their tokens, signing in and its throttle, the secret box that
encrypts stored credentials, key rotation, and the demo store's mark.

Signing in (``login``) owns its transactions, the one exception to "use-cases flush, whoever
opened the session commits", and says why. Imports nothing of the other contexts."""
