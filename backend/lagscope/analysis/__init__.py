"""Pure analysis for the polling pipeline: codes, progress, rates, lag, verdicts, ETA, rollups.

Nothing here does I/O, touches a database or reads a clock: every function takes the readings
and the times they were taken, so a test, a shell or a replay of recorded polls gets the same
answer. Metric definitions: docs/lag.md, "The figures, per channel and poll".
"""
