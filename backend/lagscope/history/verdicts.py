"""Verdict runs: what each channel of a cluster was doing over a range, as the explorer's
verdict band draws it and as the reason behind a gap in a lag line ("SQL thread stopped").

Buckets are planned like ``GET /series`` (at most ``points`` per channel, from the coarsest
table that still gives that many). A bucket's verdict is the most common one among its samples,
the more severe on a tie; consecutive buckets with the same verdict are merged into one run. A
bucket without samples (nothing polled) ends a run: the band shows a hole, never a guess.

Raw samples have each poll's verdict. The rollups keep only how many samples were caught up and
the bucket's last verdict, so there the samples not caught up count for that last verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func as sql
from sqlalchemy import literal, select, union_all
from sqlalchemy.orm import Session

from lagscope.analysis.buckets import RESOLUTION_US, BucketPlan, choose_resolution, plan_buckets
from lagscope.analysis.codes import Verdict
from lagscope.analysis.verdict_runs import Run, bucket_verdict, runs_from_buckets
from lagscope.config import Retention
from lagscope.errors import InvalidInput
from lagscope.history.series import MAX_POINTS, MAX_RANGE, _oldest_kept
from lagscope.history.series_sql import _inline, _int, _IntDiv
from lagscope.inventory.instances import get_cluster
from lagscope.models import Channel, Instance, Sample, SampleRollup1h, SampleRollup1m
from lagscope.models.types import to_micros

_ROLLUPS: dict[str, type[SampleRollup1m] | type[SampleRollup1h]] = {
    "1m": SampleRollup1m,
    "1h": SampleRollup1h,
}


@dataclass(frozen=True, slots=True)
class ChannelRuns:
    channel_id: int
    instance_id: int
    resolution: str
    bucket_ms: int
    runs: list[Run]


def _raw_counts(plan: BucketPlan, keys: Sequence[int], lo_us: int) -> Any:
    ts = _int(Sample.ts)
    k = _IntDiv(ts - _inline(plan.origin_us), _inline(plan.width_us))
    return (
        select(Sample.channel_id, k.label("k"), Sample.verdict, sql.count())
        .where(Sample.channel_id.in_(keys), ts >= lo_us, ts < plan.hi_us)
        .group_by(Sample.channel_id, k, Sample.verdict)
    )


def _rollup_counts(plan: BucketPlan, keys: Sequence[int]) -> Any:
    model = _ROLLUPS[plan.resolution]
    ts = _int(model.bucket)
    k = _IntDiv(ts - _inline(plan.origin_us), _inline(plan.width_us))
    where = (model.channel_id.in_(keys), ts >= plan.lo_us, ts < plan.hi_us)
    caught_up = (
        select(
            model.channel_id,
            k.label("k"),
            literal(int(Verdict.CAUGHT_UP)),
            sql.sum(model.caught_up),
        )
        .where(*where)
        .group_by(model.channel_id, k)
    )
    others = (
        select(
            model.channel_id,
            k.label("k"),
            model.last_verdict,
            sql.sum(model.samples - model.caught_up),
        )
        .where(*where, model.last_verdict != int(Verdict.CAUGHT_UP))
        .group_by(model.channel_id, k, model.last_verdict)
    )
    return union_all(caught_up, others)


def verdict_runs(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    points: int = 500,
    retention: Retention | None = None,
    now: datetime | None = None,
) -> list[ChannelRuns]:
    """Runs per channel of the cluster over [start, end), in channel id order."""
    if not 1 <= points <= MAX_POINTS:
        raise InvalidInput(f"points: must be between 1 and {MAX_POINTS}")
    if not start < end or end - start > MAX_RANGE:
        raise InvalidInput("end: must be after start, within two years of it")
    get_cluster(session, cluster_id)
    channels = session.execute(
        select(Channel.id, Channel.instance_id)
        .join(Instance)
        .where(Instance.cluster_id == cluster_id)
        .order_by(Channel.id)
    ).all()
    keys = [cid for cid, _ in channels]
    if not keys:
        return []
    start_us, end_us = to_micros(start), to_micros(end)
    oldest = _oldest_kept(retention, to_micros(now or datetime.now(UTC)))
    resolution = choose_resolution(start_us, end_us, points, ["raw", "1m", "1h"], oldest)
    plan = plan_buckets(start_us, end_us, points, resolution)
    counts = _verdict_counts(session, plan, keys)
    width_ms = plan.width_us // 1000
    return [
        ChannelRuns(
            cid,
            iid,
            resolution,
            width_ms,
            runs_from_buckets(
                [
                    ((plan.origin_us + k * plan.width_us) // 1000, bucket_verdict(c))
                    for k, c in sorted(counts.get(cid, {}).items())
                ],
                width_ms,
            ),
        )
        for cid, iid in channels
    ]


def _verdict_counts(
    session: Session, plan: BucketPlan, keys: Sequence[int]
) -> dict[int, dict[int, dict[Verdict, int]]]:
    """Per channel and bucket, how many polls had each verdict: from the planned table, and
    from the raw samples for the newest part the rollup job has not reached yet."""
    resolution = plan.resolution
    counts: dict[int, dict[int, dict[Verdict, int]]] = {}
    first = (
        _raw_counts(plan, keys, plan.lo_us) if resolution == "raw" else _rollup_counts(plan, keys)
    )
    rows: list[Any] = list(session.execute(first).all())
    if resolution != "raw":
        # The rollup job runs behind the clock: the newest part comes from the raw samples.
        model = _ROLLUPS[resolution]
        newest = session.scalar(
            select(sql.max(_int(model.bucket))).where(model.channel_id.in_(keys))
        )
        tail_us = plan.lo_us if newest is None else newest + RESOLUTION_US[resolution]
        if tail_us < plan.hi_us:
            rows.extend(session.execute(_raw_counts(plan, keys, tail_us)).all())
    for key, k, code, n in rows:
        if n:
            bucket = counts.setdefault(key, {}).setdefault(int(k), {})
            verdict = Verdict(code)
            bucket[verdict] = bucket.get(verdict, 0) + int(n)
    return counts
