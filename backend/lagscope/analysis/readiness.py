"""Is Lagscope itself working: each of its parts judged from what the store and broker say.

Pure: :func:`assess` takes the facts one look gathered (health/facts.py) and says, per part,
``ok``, ``warn`` (working, but an operator should know) or ``down`` (a part of the pipeline is
not working), with one sentence an operator can act on. ``/readyz``, ``GET /api/v1/health``,
``lagscope health``, the UI's health strip and ``/metrics`` all show this one judgement.

A process reports itself every ``report_every_s`` (its self-watch thread); one silent for
``STALE_REPORTS`` reports is gone. Polls are judged on the store's newest tick, not on the
processes: a worker can be alive and still poll nothing (no beat, no broker).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

# A process missing this many reports in a row is taken for gone: one late report on a busy
# box is not an outage.
STALE_REPORTS = 3
# Polls are late when the newest tick is older than this many intervals of the fastest cluster
# (a tick is dispatched once per interval; 3 leaves room for one slow and one expired).
LATE_INTERVALS = 3
# A webhook still undelivered after this long has no worker sending it (the watchdog's orphan
# grace, alerts/watchdog.py) or a receiver refusing it.
DELIVERY_LATE_S = 60.0


class State(StrEnum):
    OK = "ok"
    WARN = "warn"
    DOWN = "down"


@dataclass(frozen=True, slots=True)
class ProcessSeen:
    kind: str  # one of PROCESS_KINDS
    name: str  # host:pid
    seen_s: float
    last_dispatch_s: float | None = None


@dataclass(frozen=True, slots=True)
class Facts:
    """One look at the store and the broker, at ``now_s``. ``store_error`` set: nothing else
    from the store could be read (the lists are empty, the optionals None)."""

    now_s: float
    report_every_s: float
    store_error: str | None = None
    broker_error: str | None = None  # None and queue_depth None: not checked (not Redis)
    queue_depth: int | None = None
    processes: tuple[ProcessSeen, ...] = ()
    clusters: int = 0  # enabled clusters with at least one enabled instance
    fastest_interval_s: float | None = None
    newest_tick_s: float | None = None
    heartbeat_clusters: int = 0  # enabled clusters whose heartbeat Lagscope writes
    pending_deliveries: int = 0
    oldest_pending_s: float | None = None
    # The owner engine (LAGSCOPE_POLL_ENGINE=owner): the poll owners holding a live lease, and
    # the enabled clusters whose shard no owner holds (its lease run out or never taken).
    poll_engine: str = "celery"
    owners: int = 0
    unowned_clusters: int = 0


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    state: State
    message: str
    age_s: float | None = None  # how old the newest sign of life is, where that is the point
    count: int | None = None


@dataclass(frozen=True, slots=True)
class Readiness:
    state: State
    checked_at_s: float
    components: tuple[Component, ...] = field(default_factory=tuple)

    def failing(self, names: frozenset[str] | None = None) -> list[Component]:
        """The components that are down (of ``names``, if given)."""
        return [
            c
            for c in self.components
            if c.state is State.DOWN and (names is None or c.name in names)
        ]


PROCESS_KINDS = ("api", "worker", "beat", "heartbeat")
COMPONENTS = ("store", "broker", "workers", "beat", "polling", "deliveries", "heartbeat")


def ago(seconds: float) -> str:
    """``42 s``, ``3 min 20 s``, ``2 h 5 min``: how long an operator reads it."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        m, rest = divmod(s, 60)
        return f"{m} min {rest} s" if rest else f"{m} min"
    h, rest = divmod(s // 60, 60)
    return f"{h} h {rest} min" if rest else f"{h} h"


def assess(facts: Facts) -> Readiness:
    if facts.store_error is not None:
        # Nothing else can be judged without the store; the broker can still be told.
        parts = [Component("store", State.DOWN, f"The store is unreachable ({facts.store_error}).")]
        parts.append(_broker(facts))
        return Readiness(State.DOWN, facts.now_s, tuple(parts))
    alive = running(facts)
    owned = facts.poll_engine == "owner"
    parts = [
        Component("store", State.OK, "The store answers."),
        _owned_broker(facts) if owned else _broker(facts),
        _workers(facts, alive),
        _owned_beat(facts, alive) if owned else _beat(facts, alive),
        _owned_polling(facts) if owned else _polling(facts),
        _deliveries(facts),
    ]
    if facts.heartbeat_clusters:
        parts.append(_heartbeat(facts, alive))
    states = {p.state for p in parts}
    overall = (
        State.DOWN if State.DOWN in states else State.WARN if State.WARN in states else State.OK
    )
    return Readiness(overall, facts.now_s, tuple(parts))


def running(facts: Facts) -> list[ProcessSeen]:
    """The processes that reported within the last ``STALE_REPORTS`` periods."""
    stale_s = facts.report_every_s * STALE_REPORTS
    return [p for p in facts.processes if facts.now_s - p.seen_s <= stale_s]


def _newest(facts: Facts, kind: str) -> float | None:
    seen = [p.seen_s for p in facts.processes if p.kind == kind]
    return max(seen) if seen else None


def _gone(facts: Facts, name: str, kind: str, state: State, sentence: str) -> Component:
    """A part none of whose processes reported lately; ``{since}`` in ``sentence`` says since
    when (" yet" when one never did)."""
    newest = _newest(facts, kind)
    since = " yet" if newest is None else f" for {ago(facts.now_s - newest)}"
    return Component(name, state, sentence.format(since=since), age_s=_age(facts, newest), count=0)


def _broker(facts: Facts) -> Component:
    if facts.broker_error is not None:
        return Component(
            "broker",
            State.DOWN,
            f"The broker is unreachable ({facts.broker_error}): no poll can be dispatched.",
        )
    if facts.queue_depth is None:
        return Component("broker", State.OK, "The broker is not Redis; not checked.")
    # Ticks expire after one interval, so a healthy queue holds about one batch per worker.
    backlog = max(20, 4 * facts.clusters)
    if facts.queue_depth > backlog:
        return Component(
            "broker",
            State.WARN,
            f"{facts.queue_depth} tasks wait in the broker's queue: the workers do not keep up.",
            count=facts.queue_depth,
        )
    return Component("broker", State.OK, "The broker answers.", count=facts.queue_depth)


def _owned_broker(facts: Facts) -> Component:
    """With the owner engine polling needs only the store: a broker outage is degraded
    service, not an outage."""
    if facts.broker_error is not None:
        return Component(
            "broker",
            State.WARN,
            f"The broker is unreachable ({facts.broker_error}): polling and recording go on;"
            " webhooks wait in the store, and rollups, retention and binlog windows wait, until"
            " it is back.",
        )
    if facts.queue_depth is None:
        return Component("broker", State.OK, "The broker is not Redis; not checked.")
    return Component("broker", State.OK, "The broker answers.", count=facts.queue_depth)


def _owned_beat(facts: Facts, alive: list[ProcessSeen]) -> Component:
    beats = [p for p in alive if p.kind == "beat"]
    if not beats:
        return _gone(
            facts,
            "beat",
            "beat",
            State.WARN,
            "Beat has not reported{since}: polling goes on, but no rollup, retention, binlog"
            " window or delivery sweep runs.",
        )
    if len(beats) > 1:
        return Component(
            "beat",
            State.WARN,
            f"{len(beats)} beats are running: run exactly one (each periodic job runs once per"
            " beat).",
            count=len(beats),
        )
    return Component("beat", State.OK, "Beat is running the periodic jobs.", count=1)


def _owned_polling(facts: Facts) -> Component:
    if facts.clusters and facts.owners == 0:
        return Component(
            "polling",
            State.DOWN,
            "No poll owner is alive: no cluster is polled (is a lagscope worker running?).",
            age_s=_age(facts, facts.newest_tick_s),
            count=0,
        )
    if facts.unowned_clusters:
        noun = "cluster is" if facts.unowned_clusters == 1 else "clusters are"
        return Component(
            "polling",
            State.DOWN,
            f"{facts.unowned_clusters} {noun} in shards no poll owner holds: not polled until"
            " an owner takes them (a killed owner's shards are taken once its lease has run"
            " out).",
            count=facts.owners,
        )
    judged = _polling(facts)
    if judged.state is not State.OK or not facts.clusters:
        return judged
    noun = "owner holds" if facts.owners == 1 else "owners hold"
    return Component(
        "polling",
        State.OK,
        f"{judged.message} {facts.owners} poll {noun} every shard.",
        age_s=judged.age_s,
        count=facts.owners,
    )


def _workers(facts: Facts, alive: list[ProcessSeen]) -> Component:
    workers = [p for p in alive if p.kind == "worker"]
    if not workers:
        return _gone(facts, "workers", "worker", State.DOWN, "No worker has reported{since}.")
    noun = "worker" if len(workers) == 1 else "workers"
    return Component("workers", State.OK, f"{len(workers)} {noun} running.", count=len(workers))


def _beat(facts: Facts, alive: list[ProcessSeen]) -> Component:
    beats = [p for p in alive if p.kind == "beat"]
    if not beats:
        return _gone(
            facts,
            "beat",
            "beat",
            State.DOWN,
            "Beat has not reported{since}: no poll is dispatched.",
        )
    if len(beats) > 1:
        return Component(
            "beat",
            State.WARN,
            f"{len(beats)} beats are running: run exactly one (each second is dispatched once;"
            " the others' dispatches do nothing).",
            count=len(beats),
        )
    dispatched = beats[0].last_dispatch_s
    if facts.clusters and (
        dispatched is None or facts.now_s - dispatched > facts.report_every_s * STALE_REPORTS
    ):
        since = " yet" if dispatched is None else f" for {ago(facts.now_s - dispatched)}"
        return Component(
            "beat",
            State.DOWN,
            f"Beat runs but has not handed a poll to the broker{since}.",
            age_s=_age(facts, dispatched),
            count=1,
        )
    return Component("beat", State.OK, "Beat is dispatching polls.", count=1)


def _polling(facts: Facts) -> Component:
    if not facts.clusters or facts.fastest_interval_s is None:
        return Component("polling", State.OK, "No cluster to poll.")
    age = _age(facts, facts.newest_tick_s)
    late_s = max(facts.fastest_interval_s * LATE_INTERVALS, facts.report_every_s)
    if age is None:
        return Component("polling", State.DOWN, "No worker has polled yet.")
    if age > late_s:
        return Component("polling", State.DOWN, f"No worker has polled for {ago(age)}.", age_s=age)
    return Component("polling", State.OK, f"Polled {ago(age)} ago.", age_s=age)


def _deliveries(facts: Facts) -> Component:
    age = _age(facts, facts.oldest_pending_s)
    if age is not None and age > DELIVERY_LATE_S:
        return Component(
            "deliveries",
            State.WARN,
            f"The oldest undelivered webhook has waited {ago(age)}"
            f" ({facts.pending_deliveries} pending).",
            age_s=age,
            count=facts.pending_deliveries,
        )
    return Component(
        "deliveries",
        State.OK,
        "Webhooks are delivered." if not facts.pending_deliveries else "Webhooks are on their way.",
        age_s=age,
        count=facts.pending_deliveries,
    )


def _heartbeat(facts: Facts, alive: list[ProcessSeen]) -> Component:
    if any(p.kind == "heartbeat" for p in alive):
        return Component("heartbeat", State.OK, "The heartbeat writer is running.")
    return _gone(
        facts,
        "heartbeat",
        "heartbeat",
        State.WARN,
        "No heartbeat writer has reported{since}: lag is measured from the source's timeline"
        " until it is back.",
    )


def _age(facts: Facts, at_s: float | None) -> float | None:
    return None if at_s is None else max(0.0, facts.now_s - at_s)
