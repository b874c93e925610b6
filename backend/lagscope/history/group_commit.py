"""Group commit on a source: binlog commits and commit groups per second, commits per group,
fsyncs per second and the semi-sync wait, with the durability parameters as lanes — the picture
of "group commit makes sync_binlog=1 cheap".

The rates are the stored per-poll instance rates read through :mod:`lagscope.history.series`
(same buckets for every metric); ``commits_per_group`` is derived per bucket as Σcommits ÷
Σgroups (MariaDB only: MySQL has no ``Binlog_group_commits``; docs/replication.md). Lanes are
built from the tracked parameters' current values and their stored changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from lagscope.collectors.params import TRACKED_PARAMS
from lagscope.config import Retention
from lagscope.errors import NotFound
from lagscope.history.series import Point, Series, query_series
from lagscope.history.window import require_window
from lagscope.inventory.instances import get_cluster, instance_in_cluster
from lagscope.models import Instance, ParamChange, ParamValue

RATES = (
    "binlog_commits_per_s",
    "binlog_group_commits_per_s",
    "commits_per_s",
    "log_fsyncs_per_s",
    "data_fsyncs_per_s",
    "semi_sync_avg_wait_s",
)
_LANE_CONCEPTS = (
    "sync_binlog",
    "innodb_flush_log_at_trx_commit",
    "group_commit_sync_delay",
    "group_commit_sync_no_delay_count",
    "commit_wait_count",
    "commit_wait_usec",
    "innodb_doublewrite",
)
LANE_PARAMS = tuple(
    name
    for concept in _LANE_CONCEPTS
    for p in TRACKED_PARAMS
    if p.concept == concept
    for name in dict.fromkeys((*p.mysql, *p.mariadb))
)


@dataclass(frozen=True, slots=True)
class Lane:
    """One parameter over the window: (start, end, value) segments and the changes between."""

    name: str
    segments: list[tuple[datetime, datetime, str | None]]
    changes: list[ParamChange]


@dataclass(frozen=True, slots=True)
class GroupCommit:
    instance: Instance
    start: datetime
    end: datetime
    series: dict[str, Series]
    lanes: list[Lane]
    notes: Sequence[str]


def group_commit(
    session: Session,
    cluster_id: int,
    start: datetime,
    end: datetime,
    points: int = 300,
    instance_id: int | None = None,
    retention: Retention | None = None,
) -> GroupCommit:
    """For the cluster's source (or ``instance_id``, e.g. an intermediate source)."""
    require_window(start, end)
    cluster = get_cluster(session, cluster_id)
    if instance_id is not None:
        instance = instance_in_cluster(session, cluster, instance_id)
    else:
        found = next((i for i in cluster.instances if i.role == "source"), None)
        if found is None:
            raise NotFound(f"cluster {cluster.id} has no source instance")
        instance = found
    series = {
        name: query_series(
            session, name, start, end, instance_ids=[instance.id], points=points,
            retention=retention,
        )[0]
        for name in RATES
    }  # fmt: skip
    series["commits_per_group"] = commits_per_group(
        series["binlog_commits_per_s"], series["binlog_group_commits_per_s"]
    )
    notes = []
    if not series["commits_per_group"].points:
        notes.append(
            "commits per group needs Binlog_commits and Binlog_group_commits (MariaDB); "
            "MySQL has no group-commit counter"
        )
    return GroupCommit(instance, start, end, series, lanes(session, instance, start, end), notes)


def commits_per_group(commits: Series, groups: Series) -> Series:
    """Per bucket present in both: mean commits ÷ mean groups (Σ ÷ Σ over the same polls)."""
    by_t = {p["t"]: p for p in groups.points}
    points: list[Point] = []
    for c in commits.points:
        g = by_t.get(c["t"])
        if g is None or not g["avg"] or c["avg"] is None:
            continue
        ratio = c["avg"] / g["avg"]
        last = None
        if c["last"] is not None and g["last"]:
            last = c["last"] / g["last"]
        points.append({"t": c["t"], "min": None, "avg": ratio, "max": None, "last": last,
                       "n": min(c["n"], g["n"])})  # fmt: skip
    note = "binlog_commits_per_s ÷ binlog_group_commits_per_s per bucket (no min/max)"
    return replace(commits, metric="commits_per_group", points=points, note=note)


def lanes(session: Session, instance: Instance, start: datetime, end: datetime) -> list[Lane]:
    """The durability and group-commit parameters the instance has, over [start, end)."""
    current = {
        v.name: v
        for v in session.scalars(
            select(ParamValue).where(
                ParamValue.instance_id == instance.id, ParamValue.name.in_(LANE_PARAMS)
            )
        )
    }
    changes: dict[str, list[ParamChange]] = {}
    for change in session.scalars(
        select(ParamChange)
        .where(
            ParamChange.instance_id == instance.id,
            ParamChange.name.in_(LANE_PARAMS),
            ParamChange.first_new_at >= start,
        )
        .order_by(ParamChange.first_new_at)
    ):
        changes.setdefault(change.name, []).append(change)
    out = []
    for name in LANE_PARAMS:
        if name not in current:
            continue
        later = changes.get(name, [])
        inside = [c for c in later if c.first_new_at < end]
        # The value at ``start``: the old value of the first change after it, else the current.
        value = later[0].old_value if later else current[name].value
        segments = []
        at = start
        for change in inside:
            segments.append((at, change.first_new_at, value))
            at, value = change.first_new_at, change.new_value
        segments.append((at, end, value))
        out.append(Lane(name, segments, inside))
    return out
