"""Beat's periodic jobs are one table in the settings.

Each interval is a setting with the ``LAGSCOPE_*_EVERY_S`` name it always had, the schedule is
built from the table (no hand-copied entry per job), every job keeps ``expires`` just under its
period, and every task the table names is a task the worker registers.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest
from pydantic import ValidationError

from lagscope.config import PERIODIC_JOBS, Settings, generate_key, get_settings

KEY = generate_key()


def _settings(**overrides: object) -> Settings:
    return Settings(secret_key=KEY, **overrides)  # type: ignore[arg-type]


@pytest.fixture
def tasks_app(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """lagscope.tasks.app (which builds the Celery app from get_settings() on import) and the
    jobs registered on it, imported under a throwaway key."""
    monkeypatch.setenv("LAGSCOPE_SECRET_KEY", KEY)
    monkeypatch.delenv("LAGSCOPE_DEMO", raising=False)
    monkeypatch.delenv("LAGSCOPE_OLD_SECRET_KEYS", raising=False)
    get_settings.cache_clear()
    try:
        module = importlib.import_module("lagscope.tasks.app")
        importlib.import_module("lagscope.tasks.jobs")
    finally:
        get_settings.cache_clear()
    return module


def test_the_schedule_is_built_from_the_settings_table(tasks_app: ModuleType) -> None:
    settings = _settings(rollup_every_s=7, dispatch_every_s=0.5)
    schedule = tasks_app.beat_schedule(settings)
    assert [(name, entry["task"]) for name, entry in schedule.items()] == [
        (name, task) for name, task, _ in PERIODIC_JOBS
    ]
    assert schedule["rollup"]["schedule"] == 7
    assert schedule["dispatch-polls"]["schedule"] == 0.5
    assert schedule["retention"]["schedule"] == 3600  # the defaults as before
    assert schedule["sweep-deliveries"]["schedule"] == 15
    for entry in schedule.values():
        assert 0 < entry["options"]["expires"] < entry["schedule"]
        assert entry["options"]["expires"] == pytest.approx(entry["schedule"] * 0.9)


def test_every_interval_is_a_setting_under_its_old_name(monkeypatch: pytest.MonkeyPatch) -> None:
    names = {
        "LAGSCOPE_DISPATCH_EVERY_S": "2",
        "LAGSCOPE_ROLLUP_EVERY_S": "30",
        "LAGSCOPE_RETENTION_EVERY_S": "600",
        "LAGSCOPE_DELIVERY_SWEEP_EVERY_S": "4",
        "LAGSCOPE_COMMIT_SAMPLE_EVERY_S": "60",
    }
    for name, value in names.items():
        monkeypatch.setenv(name, value)
    every = {job.name: job.every_s for job in _settings().periodic_jobs()}
    assert every == {
        "dispatch-polls": 2,
        "rollup": 30,
        "retention": 600,
        "sweep-deliveries": 4,
        "sample-commit-groups": 60,
    }
    fields = {f"LAGSCOPE_{field.upper()}" for _, _, field in PERIODIC_JOBS}
    assert fields == set(names)
    assert fields <= {f"LAGSCOPE_{f.upper()}" for f in Settings.model_fields}


def test_the_app_schedules_the_table_and_the_worker_knows_every_task(
    tasks_app: ModuleType,
) -> None:
    app = tasks_app.app
    assert set(app.conf.beat_schedule) == {name for name, _, _ in PERIODIC_JOBS}
    for _, task, _ in PERIODIC_JOBS:
        assert task in app.tasks, f"beat would send {task}, which no worker registers"


@pytest.mark.parametrize("value", [0, -1])
def test_an_interval_that_would_spin_beat_is_refused(value: float) -> None:
    with pytest.raises(ValidationError, match="rollup_every_s"):
        _settings(rollup_every_s=value)
