"""The Celery application and its periodic jobs.

The periodic jobs are one table in the settings (:data:`lagscope.config.PERIODIC_JOBS`, each
interval a ``LAGSCOPE_*_EVERY_S`` setting), each sent with ``expires`` just under its period so a
slow worker drops stale ticks instead of piling them up.
Task arguments are ids and primitives through the JSON serializer; never ORM objects or
credentials.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from lagscope.config import Settings, get_settings
from lagscope.tasks.queues import routes, time_limits

# A tick that waited longer than this share of its period is dropped, not run late.
EXPIRES_SHARE = 0.9


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """Celery's ``beat_schedule`` from the settings' one table of periodic jobs."""
    return {
        job.name: {
            "task": job.task,
            "schedule": job.every_s,
            "options": {"expires": job.every_s * EXPIRES_SHARE},
        }
        for job in settings.periodic_jobs()
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
        beat_schedule=beat_schedule(settings),
        timezone="UTC",
        enable_utc=True,
        worker_hijack_root_logger=False,
        # Slow jobs on a queue of their own, never in the polls' pool (tasks/queues.py).
        task_routes=routes(),
        task_annotations=time_limits(settings.slow_job_time_limit_s),
        # Back on the broker within a second of its return (tasks/consumer.py).
        worker_consumer="lagscope.tasks.consumer:Consumer",
    )
    return app


app = make_app()

# The self-watch threads' signal handlers, connected wherever the app is loaded (they fire only
# in a worker's pool parent and in beat).
from lagscope.tasks import processes as _processes  # noqa: E402, F401
