"""The live feed of new samples for a cluster's charts (the SSE ``sample`` events): polled from the
store, looking back far enough that a tick committed late is still delivered, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lagscope.history.status.cluster import lag_source_label, verdict_label
from lagscope.history.status.latest import _newest_sample_ts
from lagscope.inventory.instances import get_cluster
from lagscope.models import Channel, Instance, Sample


@dataclass(frozen=True, slots=True)
class FeedSample:
    """One new sample for a live chart (the SSE ``sample`` event)."""

    channel_id: int
    ts: datetime
    lag_s: float | None
    lag_source: str | None
    verdict: str | None
    not_received: int | None
    received_not_applied: int | None


# A tick's rows carry its read time but become visible at commit, up to a poll deadline later,
# and two workers may commit neighbouring ticks out of order: each poll looks back this far and
# skips what it already sent, so a late commit is still delivered, once.
FEED_LOOKBACK = timedelta(seconds=5)
# New rows per poll; a resume after a long gap is caught up over a few polls, not one huge read.
FEED_BATCH = 2000


@dataclass(slots=True)
class SampleFeed:
    """The samples of a cluster not yet sent, oldest first; ``cursor`` is the newest sent.

    Everything at or before ``floor`` counts as sent: at start, what the client already has
    (its ``Last-Event-ID``, or the newest stored sample), later the end of the look-back.
    ``more`` says the last poll stopped at :data:`FEED_BATCH` with newer rows waiting.
    """

    cluster_id: int
    floor: datetime
    cursor: datetime
    sent: set[tuple[int, datetime]] = field(default_factory=set)
    more: bool = False

    def poll(self, session: Session) -> list[FeedSample]:
        channel_ids = (
            select(Channel.id)
            .join(Instance, Instance.id == Channel.instance_id)
            .where(Instance.cluster_id == self.cluster_id)
        )
        in_cluster = Sample.channel_id.in_(channel_ids)
        since = max(self.floor, self.cursor - FEED_LOOKBACK)
        # Two reads: the look-back window is re-read whole (it is small and mostly sent), and
        # only the rows past the cursor are limited, so a busy window cannot stall the feed.
        late = []
        if since < self.cursor:
            window = (Sample.ts > since, Sample.ts <= self.cursor)
            late = [
                r
                for r in session.scalars(select(Sample).where(in_cluster, *window))
                if (r.channel_id, r.ts) not in self.sent
            ]
        ahead = session.scalars(
            select(Sample)
            .where(in_cluster, Sample.ts > self.cursor)
            .order_by(Sample.ts, Sample.channel_id)
            .limit(FEED_BATCH)
        ).all()
        self.more = len(ahead) == FEED_BATCH
        new = sorted([*late, *ahead], key=lambda r: (r.ts, r.channel_id))
        for row in new:
            self.sent.add((row.channel_id, row.ts))
            self.cursor = max(self.cursor, row.ts)
        self.floor = max(self.floor, self.cursor - FEED_LOOKBACK)
        self.sent = {key for key in self.sent if key[1] > self.floor}
        return [_feed_sample(r) for r in new]


def _feed_sample(r: Sample) -> FeedSample:
    return FeedSample(
        r.channel_id,
        r.ts,
        r.lag_s,
        lag_source_label(r.lag_source),
        verdict_label(r.verdict),
        r.not_received,
        r.received_not_applied,
    )


def open_feed(session: Session, cluster_id: int, after: datetime | None) -> SampleFeed:
    """A feed from ``after`` (a resumed stream), else from the newest sample stored now."""
    get_cluster(session, cluster_id)
    if after is None:
        # The max of per-channel maxima: each is a key seek, where one max over the cluster's
        # samples would read every stored row of its channels.
        after = session.scalar(
            select(func.max(_newest_sample_ts()))
            .select_from(Channel)
            .join(Instance, Instance.id == Channel.instance_id)
            .where(Instance.cluster_id == cluster_id)
        )
    start = after or datetime.fromtimestamp(0, UTC)
    return SampleFeed(cluster_id, floor=start, cursor=start)
