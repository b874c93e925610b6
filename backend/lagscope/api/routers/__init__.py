"""One router per area; each is a few lines over a service."""
