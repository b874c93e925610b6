"""The Celery application and its periodic jobs.

One table of periodic jobs, each with an env override and ``expires`` just under its period so
a slow worker drops stale ticks instead of piling them up (STYLE.md, after paperless-ngx).
Task arguments are ids and primitives through the JSON serializer; never ORM objects or
credentials.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

from lagscope.config import get_settings


def _every(env: str, default_s: float) -> float:
    return float(os.environ.get(env, default_s))


def beat_schedule() -> dict[str, dict[str, Any]]:
    dispatch = _every("LAGSCOPE_DISPATCH_EVERY_S", 1.0)
    rollup = _every("LAGSCOPE_ROLLUP_EVERY_S", 60.0)
    retention = _every("LAGSCOPE_RETENTION_EVERY_S", 3600.0)
    # Pending webhook deliveries whose queued task was lost (killed worker, flushed broker).
    sweep = _every("LAGSCOPE_DELIVERY_SWEEP_EVERY_S", 15.0)
    return {
        "dispatch-polls": {
            "task": "lagscope.dispatch_polls",
            "schedule": dispatch,
            "options": {"expires": dispatch * 0.9},
        },
        "rollup": {
            "task": "lagscope.rollup",
            "schedule": rollup,
            "options": {"expires": rollup * 0.9},
        },
        "retention": {
            "task": "lagscope.enforce_retention",
            "schedule": retention,
            "options": {"expires": retention * 0.9},
        },
        "sweep-deliveries": {
            "task": "lagscope.sweep_deliveries",
            "schedule": sweep,
            "options": {"expires": sweep * 0.9},
        },
    }


def make_app() -> Celery:
    settings = get_settings()
    app = Celery("lagscope", broker=settings.broker_url, include=["lagscope.tasks.jobs"])
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        result_backend=None,
        # A poll tick is short and time-bound: prefetching would hold ticks until they expire.
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
        beat_schedule=beat_schedule(),
        timezone="UTC",
        enable_utc=True,
        worker_hijack_root_logger=False,
    )
    return app


app = make_app()
