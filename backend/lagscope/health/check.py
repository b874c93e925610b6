"""Lagscope's health, judged now: what /readyz, ``lagscope health`` and /metrics show."""

from __future__ import annotations

import time

from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.readiness import Readiness, assess
from lagscope.config import Settings
from lagscope.health.facts import gather


def check(
    sessions: sessionmaker[Session], settings: Settings, now_s: float | None = None
) -> Readiness:
    now_s = time.time() if now_s is None else now_s
    facts = gather(
        sessions,
        settings.broker_url,
        settings.report_every_s,
        now_s,
        settings.poll_engine,
        settings.shards,
    )
    return assess(facts)
