"""Every poll reaches a real Prometheus through remote write: the lab polled by the owner engine,
Prometheus (Debian's, its remote-write receiver on) holds a sample for every poll, 1 s apart, at
the poll's own time and with the value the store holds for it: the lag, trx_behind and the
parameters."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from lagscope.lab import Lab
from lagscope.models import Instance, ParamValue

from .pipeline_stack import Pipeline, start_pipeline
from .prometheus_server import prometheus_server, query
from .waiting import wait_until

pytestmark = pytest.mark.integration

# No scrape at all: every sample Prometheus holds came by remote write.
CONFIG = "global:\n  scrape_interval: 1m\nscrape_configs: []\n"


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[str]:
    directory = tmp_path / "prometheus"
    directory.mkdir()
    with prometheus_server(directory, CONFIG, "--web.enable-remote-write-receiver") as url:
        yield url


@pytest.fixture
def pipeline(lab: Lab, tmp_path: Path, prometheus: str) -> Iterator[Pipeline]:
    env = {"LAGSCOPE_REMOTE_WRITE_URL": f"{prometheus}/api/v1/write"}
    with start_pipeline(lab, tmp_path, heartbeat=False, extra_env=env) as started:
        yield started


def raw(prometheus: str, expr: str) -> list[tuple[int, float]]:
    """The samples of the one series ``expr`` selects over the last 2 minutes, as (ms, value)."""
    found = query(prometheus, f"{expr}[2m]")
    if len(found) != 1:
        return []
    return [(round(float(at) * 1000), float(value)) for at, value in found[0]["values"]]


def one_second_apart(pushed: list[tuple[int, float]]) -> None:
    assert len(pushed) >= 10, pushed
    gaps = [(b - a) / 1000 for (a, _), (b, _) in itertools.pairwise(pushed)]
    assert 0.8 <= statistics.median(gaps) <= 1.2, gaps
    assert max(gaps) <= 2.5, gaps


@pytest.mark.parametrize("server", ["replica1", "replica2"])
def test_every_poll_is_a_sample_in_prometheus_at_its_own_time(
    pipeline: Pipeline, prometheus: str, server: str
):
    lag = f'lagscope_lag_seconds{{cluster="lab",server="{server}"}}'
    wait_until(lambda: len(raw(prometheus, lag)) >= 15, timeout_s=60, message="15 lag samples")
    trx = f'lagscope_trx_behind{{cluster="lab",server="{server}"}}'
    for expr, column in ((lag, "lag_s"), (trx, "trx_behind")):
        pushed = raw(prometheus, expr)
        stored = {
            round(s.ts.timestamp() * 1000): getattr(s, column)
            for s in pipeline.samples(server, datetime(2000, 1, 1, tzinfo=UTC))
        }
        # Each sample is a stored poll's, at its millisecond, with its value.
        for at_ms, value in pushed:
            assert at_ms in stored, (expr, at_ms)
            assert stored[at_ms] == pytest.approx(value, abs=1e-9), (expr, at_ms)
        one_second_apart(pushed)
    # The parameters, every poll too: at the lag's timestamps, with the value the store holds.
    with pipeline.session() as session:
        stored_params = {
            name: value
            for name, value in session.execute(
                select(ParamValue.name, ParamValue.value)
                .join(Instance)
                .where(Instance.name == server)
            )
        }
    lag_times = {at for at, _ in raw(prometheus, lag)}
    for name in ("innodb_flush_log_at_trx_commit", "sync_binlog", "slave_parallel_threads"):
        pushed = raw(
            prometheus,
            f'lagscope_parameter{{cluster="lab",server="{server}",parameter="{name}"}}',
        )
        one_second_apart(pushed)
        assert {value for _, value in pushed} == {float(stored_params[name])}, name
        assert {at for at, _ in pushed} & lag_times, name
    up = raw(prometheus, f'lagscope_up{{cluster="lab",server="{server}"}}')
    assert up and {value for _, value in up} == {1.0}
    verdicts = query(prometheus, f'lagscope_verdict{{server="{server}"}} == 1')
    assert len(verdicts) == 1, verdicts
