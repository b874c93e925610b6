"""Is the heartbeat writer alive? Judged from the writer's own row as read on the source.

A heartbeat lag is only a lag while the row keeps advancing on the source: once the writer
stops (its process died, its login was cleared, pt-heartbeat was killed), every replica shows
the row's age, which grows forever whatever the replicas do (2,734 s on caught-up
replicas, once). The row on the *source* tells the two apart: a replica's row may lag
because the replica does, the source's own row lags only because nobody writes it.
"""

from __future__ import annotations

# The writer is stopped when its row on the source is older than this many of its intervals,
# and never under STALE_MIN_S: the writer is one Python (or Perl) process on a shared box, a
# GC pause or a busy core delays a beat by a second or two, and the offset between the
# writer's clock and the source's (pt-heartbeat stamps its own host's time) adds its own error.
STALE_INTERVALS = 10
STALE_MIN_S = 5.0


def stale_after_s(interval_s: float) -> float:
    """The age of the source's own heartbeat row above which the writer counts as stopped."""
    return max(STALE_INTERVALS * interval_s, STALE_MIN_S)


def writer_stopped_since(
    own_row_ts: float | None, source_now: float, interval_s: float
) -> float | None:
    """The writer's last beat (epoch s) when it has stopped; None while it writes, or unknown.

    ``own_row_ts`` is the newest row the source's own server_id has in the heartbeat table, as
    read on the source; ``source_now`` is the source's clock at that read. No row at all is not
    a stopped writer (it never wrote: there is no heartbeat lag to discount either).
    """
    if own_row_ts is None:
        return None
    return own_row_ts if source_now - own_row_ts > stale_after_s(interval_s) else None
