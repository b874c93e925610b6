"""The demo's incidents as data: each cause of lag made to happen on the demo's own lab, with the
note saying what was done and what Lagscope should name, and the plans ``lagscope demo`` plays.

Pure like the phases (demo/scenario.py): :mod:`lagscope.lab.incidents` makes each incident
happen, and the runner (:mod:`lagscope.demo.scenario_runner`) plays them and writes the notes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lagscope.analysis.causes.model import Cause
from lagscope.demo.scenario import DEFAULT_PHASE_SECONDS, DEMO_SCENARIOS, Phase, tuning_plan
from lagscope.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class IncidentStep:
    """One cause made to happen on the demo's lab (:data:`lagscope.lab.incidents.INCIDENTS`)."""

    incident: str  # the lab's name for it
    title: str  # what is done, in an operator's words (the note's text)
    cause: Cause  # what Lagscope should name
    # Held this long once the servers show it; one that ends by itself (a large transaction, an
    # ALTER) is left to run at least this long, then the replicas are waited for.
    seconds: float
    options: tuple[tuple[str, int | float | str], ...] = ()
    # Quiet after it was undone and the replicas caught up: the episode closes before the next.
    quiet_s: float = 30.0
    # The write load while it plays (None: the scenario's own).
    load_tps: float | None = None

    @property
    def note(self) -> str:
        return f"incident: {self.title} — Lagscope should say: {self.cause.words}"

    @property
    def tags(self) -> tuple[str, ...]:
        return ("scenario", "incident", self.cause.label)


Step = Phase | IncidentStep

# Held 75 s: lag passes 30 s after 30 s, and the demo's alert rule (over 30 s for 30 s) fires
# before the lock is let go, so the inbox shows the alert with its "why".
INCIDENTS_PLAN: tuple[IncidentStep, ...] = (
    IncidentStep(
        "row_lock",
        "a session on replica1 holds row locks (SELECT … FOR UPDATE) that the applier needs",
        Cause.BLOCKED_BY_SESSION,
        75.0,
        (("replica", "replica1"),),
    ),
    IncidentStep(
        "metadata_lock",
        "a session on replica1 keeps a transaction open on a table the source then alters",
        Cause.BLOCKED_BY_SESSION,
        45.0,
        (("replica", "replica1"),),
    ),
    IncidentStep(
        "large_transaction",
        "one UPDATE of every row of a table big enough to apply for ~10 s here",
        Cause.LARGE_TRANSACTION,
        40.0,
        (),
    ),
    IncidentStep(
        "long_alter",
        "ALTER TABLE … ALGORITHM=COPY of a table big enough to copy for ~6 s here",
        Cause.DDL,
        40.0,
        (),
    ),
    IncidentStep(
        "no_primary_key",
        "one UPDATE of every row of a table without a primary key (row format), big enough to "
        "scan for ~40 s here",
        Cause.NO_USABLE_KEY,
        40.0,
        (("lasting_s", 40.0),),
    ),
    IncidentStep(
        "network_bound",
        "the link to replica2 (far) squeezed to 50 kB/s while the source writes 250 kB/s",
        Cause.NETWORK,
        50.0,
        (("replica", "replica2"), ("bandwidth_bps", 50_000), ("write_bps", 250_000)),
    ),
)
# The tuning story's opening: a blocked applier at a light load (a backlog of ~5000
# transactions, drained in seconds), so phase A starts from caught-up replicas.
TUNING_INCIDENT = IncidentStep(
    "row_lock",
    "a session on replica1 holds row locks (SELECT … FOR UPDATE) that the applier needs",
    Cause.BLOCKED_BY_SESSION,
    25.0,
    (("replica", "replica1"),),
    quiet_s=10.0,
    load_tps=200.0,
)


def demo_plan(scenario: str, seconds: Sequence[float] = DEFAULT_PHASE_SECONDS) -> tuple[Step, ...]:
    """What ``lagscope demo --scenario`` plays on its own lab."""
    if scenario not in DEMO_SCENARIOS:
        raise InvalidInput(f"scenario must be one of {DEMO_SCENARIOS}, not {scenario!r}")
    if scenario == "incidents":
        return INCIDENTS_PLAN
    if scenario == "tuning":
        return (TUNING_INCIDENT, *tuning_plan(seconds))
    return ()
