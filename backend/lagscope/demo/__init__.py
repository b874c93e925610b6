"""The demo: a live lab under load, the tuning scenario (grows with later issues)."""
