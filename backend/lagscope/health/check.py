"""Lagscope's health, judged now: what /readyz, ``lagscope health`` and /metrics show."""

from __future__ import annotations

import time

from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.readiness import Readiness, assess
from lagscope.config import Settings
from lagscope.health.facts import gather_with


def check(
    sessions: sessionmaker[Session], settings: Settings, now_s: float | None = None
) -> Readiness:
    now_s = time.time() if now_s is None else now_s
    facts = gather_with(sessions, settings, now_s)
    return assess(facts)
