"""Apply-side causes read from settings, rates and worker states: durability-bound serial
apply, one applier thread where the source's commit groups allow more, parallel workers waiting
on each other, and a source writing faster than the replica can apply (docs/causes.md)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.model import Cause, EvidenceValue, Finding
from lagscope.analysis.causes.seen import RECENT, Seen
from lagscope.analysis.codes import Verdict

# The source's binlog groups hold more than this many commits on average: parallel apply has
# work to share (docs/causes.md, "The causes").
PARALLEL_GROUP_MIN = 1.5
# fsyncs per applied transaction at or above this count as "each commit waits for an fsync".
FSYNC_PER_COMMIT_MIN = 0.8
# The source writes above the replica's capacity by this factor, and the replica applies at
# this share of it or more ("at capacity"), for a source burst.
BURST_OVER_CAPACITY = 1.1
AT_CAPACITY = 0.8
# A burst is a rise: the source writes at least this many times its usual rate, the median of
# its rate over the polls before the recent ones (at least USUAL_POLLS_MIN of them). Without it a
# constant load above a slow replica's capacity was called a burst that "catches up once the
# source slows down" (the tuning story's phase B on a busy box: 2,000 trx/s all along, a serial
# replica applying 1,100-1,700/s); that is the replica's capacity, not the load. Per-second
# rates of a steady load swing by ~20 %, hence 1.5.
BURST_OVER_USUAL = 1.5
USUAL_POLLS_MIN = 5


@dataclass(frozen=True, slots=True)
class Parallel:
    """The replica's parallel-apply settings, under the names the server uses."""

    product: str | None
    workers: int | None
    workers_param: str
    mode: str | None
    mode_param: str | None

    @property
    def serial(self) -> bool | None:
        if self.product == "mariadb" and (self.mode or "").lower() == "none":
            return True
        if self.workers is None:
            return None
        return self.workers <= (0 if self.product == "mariadb" else 1)


def _int(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def parallel_of(seen: Seen) -> Parallel:
    params = seen.inputs.params
    product = seen.product
    if product == "mariadb":
        status = seen.inputs.status
        mode = (status.parallel_mode if status is not None else None) or params.get(
            "slave_parallel_mode"
        )
        workers = _int(params.get("slave_parallel_threads"))
        return Parallel(product, workers, "slave_parallel_threads", mode, "slave_parallel_mode")
    name = next(
        (n for n in ("replica_parallel_workers", "slave_parallel_workers") if n in params),
        "replica_parallel_workers",
    )
    type_name = next(
        (n for n in ("replica_parallel_type", "slave_parallel_type") if n in params), None
    )
    mode = params.get(type_name) if type_name else None
    return Parallel(product, _int(params.get(name)), name, mode, type_name)


def _on(value: str | None) -> bool:
    return (value or "").strip().upper() in ("1", "ON")


def _apply_bound(seen: Seen) -> bool:
    return seen.inputs.metrics.verdict is Verdict.APPLY_BOUND and seen.held_behind


def durable_apply(seen: Seen, parallel: Parallel) -> Finding | None:
    if not _apply_bound(seen) or parallel.serial is not True:
        return None
    params = seen.inputs.params
    settings = []
    if (params.get("innodb_flush_log_at_trx_commit") or "").strip() == "1":
        settings.append("innodb_flush_log_at_trx_commit=1")
    binlogging = params.get("log_slave_updates", params.get("log_replica_updates"))
    if (params.get("sync_binlog") or "").strip() == "1" and (binlogging is None or _on(binlogging)):
        settings.append("sync_binlog=1")
    if not settings:
        return None
    commits, polls = seen.count(seen.sql, "commit")
    rates = seen.inputs.rates
    per_commit = None
    if rates is not None and rates.log_fsyncs_per_s and rates.commits_per_s:
        per_commit = rates.log_fsyncs_per_s / rates.commits_per_s
    fsync_bound = per_commit is not None and per_commit >= FSYNC_PER_COMMIT_MIN
    if commits < 2 and not fsync_bound:
        return None
    confidence = 0.6 + (0.15 if commits >= 2 else 0.0) + (0.15 if fsync_bound else 0.0)
    metrics = seen.inputs.metrics
    how = (
        f"about {per_commit:.1f} fsyncs per transaction"
        if per_commit is not None and fsync_bound
        else f"committing in {commits} of the last {polls} polls"
    )
    pace = ""
    if metrics.apply_rate is not None and metrics.source_rate is not None:
        pace = (
            f": it applies {words.per_s(metrics.apply_rate)} while the source writes "
            f"{words.per_s(metrics.source_rate)}"
        )
    return Finding(
        Cause.DURABLE_APPLY,
        min(confidence, 0.9),
        f"{seen.name} applies one transaction at a time and each commit waits for its fsyncs "
        f"({', '.join(settings)}; {how}){pace}.",
        f"Relax durability on {seen.name} (innodb_flush_log_at_trx_commit=2, sync_binlog=0: a "
        "replica can be rebuilt from its source) or apply in parallel; record it as a journal "
        "step to verify.",
        MappingProxyType(
            {
                "innodb_flush_log_at_trx_commit": params.get("innodb_flush_log_at_trx_commit"),
                "sync_binlog": params.get("sync_binlog"),
                "commit_polls": commits,
                "polls": polls,
                "fsyncs_per_trx": None if per_commit is None else round(per_commit, 2),
                "apply_rate": metrics.apply_rate,
                "source_rate": metrics.source_rate,
                parallel.workers_param: parallel.workers,
            }
        ),
    )


def serial_apply(seen: Seen, parallel: Parallel) -> Finding | None:
    if not _apply_bound(seen):
        return None
    if parallel.serial is not True:
        return _database_type(seen, parallel)
    source = seen.inputs.source
    per_group = source.rates.commits_per_group if source and source.rates else None
    evidence: dict[str, EvidenceValue] = {
        parallel.workers_param: parallel.workers,
        "source_commits_per_group": None if per_group is None else round(per_group, 2),
    }
    if parallel.mode_param:
        evidence[parallel.mode_param] = parallel.mode
    if per_group is not None and per_group <= PARALLEL_GROUP_MIN:
        return None  # the source commits one by one: more threads would have nothing to share
    if parallel.product == "mariadb":
        knob = "slave_parallel_threads=4 with slave_parallel_mode=optimistic"
    else:
        knob = (
            "replica_parallel_workers=4 with replica_parallel_type=LOGICAL_CLOCK and "
            "replica_preserve_commit_order=ON"
        )
    action = f"Set {knob} on {seen.name}; record it as a journal step to verify."
    if per_group is None:
        return Finding(
            Cause.SERIAL_APPLY,
            0.45,
            f"{seen.name} applies with one thread; how many of the source's transactions could "
            "apply together is not measured here.",
            action,
            MappingProxyType(evidence),
            "unknown: the source's commit group size (MariaDB Binlog_group_commits; MySQL "
            "has no such counter)",
        )
    return Finding(
        Cause.SERIAL_APPLY,
        0.8,
        f"{seen.name} applies with one thread while the source commits {per_group:.1f} "
        f"transactions per group: parallel apply could use up to ~{max(2, round(per_group))} "
        "threads.",
        action,
        MappingProxyType(evidence),
    )


def _database_type(seen: Seen, parallel: Parallel) -> Finding | None:
    """MySQL's DATABASE type parallelises across schemas only: one busy schema is serial."""
    if parallel.product == "mariadb" or (parallel.mode or "").upper() != "DATABASE":
        return None
    if len(seen.workers) < 2:
        return None
    applying = sum(a for a, _, _ in seen.workers) / len(seen.workers)
    if applying > 1.2:
        return None
    return Finding(
        Cause.SERIAL_APPLY,
        0.7,
        f"{seen.name} has {parallel.workers} applier threads but "
        f"{parallel.mode_param}=DATABASE applies one schema at a time: {applying:.1f} of them "
        "apply on average.",
        f"Set {parallel.mode_param}=LOGICAL_CLOCK on {seen.name} (with "
        "replica_preserve_commit_order=ON); record it as a journal step to verify.",
        MappingProxyType(
            {
                parallel.workers_param: parallel.workers,
                str(parallel.mode_param): parallel.mode,
                "applying_avg": round(applying, 2),
            }
        ),
    )


def ordering(seen: Seen, parallel: Parallel) -> Finding | None:
    if not _apply_bound(seen) or parallel.serial is not False:
        return None
    recent = seen.workers[-3:]
    retried_per_s = seen.growth_per_s(seen.retried)
    retrying = retried_per_s is not None and retried_per_s > 0 and seen.growing(seen.retried)
    mostly_waiting = False
    applying = waiting = total = 0.0
    if len(recent) >= 2:
        applying = sum(a for a, _, _ in recent) / len(recent)
        waiting = sum(w for _, w, _ in recent) / len(recent)
        total = max(t for _, _, t in recent)
        # "Mostly": more wait than apply. In-order commit leaves some workers waiting their
        # turn at any moment: with 4 workers draining fast (the tuning story's phase C, the
        # apply rate up 45 % on serial) three polls sampled (3, 1), (2, 2), (1, 3) applying /
        # waiting, and a tie (2.0 vs 2.0) was called ordering.
        mostly_waiting = waiting >= 1.0 and waiting > applying
    if not (mostly_waiting or retrying):
        return None
    head = f"{seen.name} has {total:.0f} applier threads" if total else f"{seen.name}'s applier"
    parts = []
    if mostly_waiting:
        parts.append(
            f"{head} but on average {applying:.1f} apply while {waiting:.1f} wait for earlier "
            "transactions to commit: its transactions depend on each other"
        )
    if retrying and retried_per_s is not None:
        retries = f"{retried_per_s:.1f} transactions a second are retried after conflicts"
        parts.append(retries if parts else f"{head}: {retries}")
    confidence = (0.7 if mostly_waiting else 0.5) + (0.1 if retrying else 0.0)
    return Finding(
        Cause.ORDERING,
        confidence,
        "; ".join(parts) + ".",
        "More threads will not help: let the source group more commits "
        "(binlog_commit_wait_count / binlog_group_commit_sync_delay); many retries mean "
        "conflicting transactions, where a more conservative parallel mode wastes less.",
        MappingProxyType(
            {
                "workers": int(total) if total else parallel.workers,
                "applying_avg": round(applying, 2),
                "waiting_for_prior_avg": round(waiting, 2),
                "retried_per_s": None if retried_per_s is None else round(retried_per_s, 2),
                "retried_transactions": seen.retried[-1][1] if seen.retried else None,
            }
        ),
    )


def source_burst(seen: Seen) -> Finding | None:
    """The source writes above what this replica has shown it can apply, the replica applies at
    that capacity and the backlog grows: the load, not the replica, is the cause."""
    metrics = seen.inputs.metrics
    if not _apply_bound(seen):
        return None
    capacity, apply_rate, source_rate = seen.capacity(), metrics.apply_rate, metrics.source_rate
    if capacity is None or apply_rate is None or source_rate is None or capacity <= 0:
        return None
    if source_rate <= BURST_OVER_CAPACITY * capacity or apply_rate < AT_CAPACITY * capacity:
        return None
    if not seen.growing(seen.trx_behind):
        return None
    usual = _usual_source_rate(seen)
    if usual is None or source_rate < BURST_OVER_USUAL * usual:
        return None
    if seen.burst_since is None:
        seen.burst_since = seen.at
        seen.burst_base = usual
    lasted = seen.at - seen.burst_since
    for_how_long = f" for {words.seconds(lasted)}" if lasted >= 1 else ""
    # Above capacity, apply cannot gain on the source: the backlog drains once the source slows.
    behind_by = words.per_s(source_rate - apply_rate)
    return Finding(
        Cause.SOURCE_BURST,
        0.6,
        f"The source has written {words.per_s(source_rate)}{for_how_long}, above {seen.name}'s "
        f"capacity of {words.per_s(capacity)} (its best apply rate of late); it falls "
        f"{behind_by} further behind while this lasts and catches up once the source slows down.",
        "Nothing to tune for a rare burst; if they recur, raise the replica's apply capacity "
        "(parallel apply, lighter durability) and let the journal show which step helps.",
        MappingProxyType(
            {
                "source_rate": round(source_rate, 1),
                "apply_rate": round(apply_rate, 1),
                "capacity": round(capacity, 1),
                "trx_behind": metrics.trx_behind,
                "burst_s": round(lasted, 1),
                "usual_source_rate": round(usual, 1),
            }
        ),
    )


def _usual_source_rate(seen: Seen) -> float | None:
    """What the source usually writes: the rate a burst under way started from, else the median
    over the polls before the recent ones (those may already be the burst); None when too few
    polls are known to say (a burst under way when monitoring starts is not named)."""
    if seen.burst_since is not None and seen.burst_base is not None:
        return seen.burst_base
    earlier = seen.source_rates[:-RECENT]
    if len(earlier) < USUAL_POLLS_MIN:
        return None
    return statistics.median(earlier)
