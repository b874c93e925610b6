"""What the settings hand the periodic work: beat's table of jobs and the retention per table.

One table (PERIODIC_JOBS) is what tasks/app.py builds beat's schedule from, so adding a job is a
row here and a setting for how often, never a second list to keep in step.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Retention:
    raw_days: float
    minute_days: float
    hour_days: float
    # Ended lag episodes with their cause segments; alert events with their finished deliveries
    # (both hold text from monitored servers: docs/security.md).
    episode_days: float = 90.0
    alert_days: float = 90.0
    # Who changed what (models/audit.py).
    audit_days: float = 365.0


@dataclass(frozen=True, slots=True)
class PeriodicJob:
    """One of beat's periodic jobs: its schedule entry, the Celery task it sends (the explicit
    ``name=`` of the task, so a module move orphans nothing) and how often (seconds)."""

    name: str
    task: str
    every_s: float


# Beat's periodic jobs: (schedule entry, task name, the setting that says how often). The one
# table tasks/app.py builds the schedule from; each interval is a setting, LAGSCOPE_<FIELD>.
PERIODIC_JOBS = (
    ("dispatch-polls", "lagscope.dispatch_polls", "dispatch_every_s"),
    ("rollup", "lagscope.rollup", "rollup_every_s"),
    ("retention", "lagscope.enforce_retention", "retention_every_s"),
    ("sweep-deliveries", "lagscope.sweep_deliveries", "delivery_sweep_every_s"),
    ("sample-commit-groups", "lagscope.sample_commit_groups", "commit_sample_every_s"),
)
