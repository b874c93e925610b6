"""The metric catalog against every list it feeds or that must agree with it.

A list derived from the catalog cannot drift; these tests fail when a hand-written one (a table's
columns, a dataclass, a schema, the alert evaluator's names) no longer matches the rows.
"""

from __future__ import annotations

import json
import typing
from dataclasses import fields
from pathlib import Path

from lagscope.alerts import readings as alert_readings
from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.rollup import Bucket, RawPoint
from lagscope.api.schemas.alerts import Metric as AlertMetricName
from lagscope.api.schemas.series import MetricName
from lagscope.api.schemas.status import ChannelStatusOut
from lagscope.collectors.snapshot import ChannelStatus
from lagscope.history import prometheus as metrics
from lagscope.history import series, status
from lagscope.metrics_catalog import (
    ALERT_NAMES,
    ALERTS,
    CHANNEL_COLUMNS,
    FROM_STATUS,
    GAUGES,
    INSTANCE_COLUMNS,
    ROLLED_UP,
    SERIES_NAMES,
    STORED,
    STREAMED,
    rollup_columns,
)
from lagscope.models import InstanceSample, Sample, SampleRollup1m

ROOT = Path(__file__).resolve().parents[3]


def _columns(model: type[object], *keys: str) -> list[str]:
    table = model.__table__  # type: ignore[attr-defined]
    return [c.name for c in table.columns if c.name not in keys]


def test_one_row_per_stored_column_in_table_order() -> None:
    assert [m.name for m in CHANNEL_COLUMNS] == _columns(Sample, "channel_id", "ts")
    assert [m.name for m in INSTANCE_COLUMNS] == _columns(InstanceSample, "instance_id", "ts")
    assert len({m.name for m in STORED}) == len(STORED)


def test_rollup_tables_hold_exactly_the_rolled_up_rows() -> None:
    kept = {"samples", "caught_up", "last_verdict"}
    expected = [c for m in ROLLED_UP for c in rollup_columns(m)]
    assert sorted(_columns(SampleRollup1m, "channel_id", "bucket", *kept)) == sorted(expected)
    assert {f.name for f in fields(Bucket)} == {"bucket_us", *kept, *expected}
    assert {f.name for f in fields(RawPoint)} == {"ts_us", "verdict", *(m.name for m in ROLLED_UP)}
    assert all(m.per == "channel" for m in ROLLED_UP)


def test_series_whitelist_and_api_enum_follow_the_catalog() -> None:
    assert tuple(series.METRICS) == SERIES_NAMES
    assert typing.get_args(MetricName) == SERIES_NAMES
    for name, metric in series.METRICS.items():
        stored = next(m for m in STORED if m.name == name)
        assert metric.per == stored.per
        assert len(metric.sources) == (3 if stored.rollup else 1)


def test_the_openapi_document_carries_the_catalog_enums() -> None:
    document = json.loads((ROOT / "frontend/src/api/openapi.json").read_text())
    schemas = document["components"]["schemas"]
    assert tuple(schemas["SeriesResponse"]["properties"]["metric"]["enum"]) == SERIES_NAMES
    assert tuple(schemas["RuleIn"]["properties"]["metric"]["enum"]) == ALERT_NAMES


def test_every_channel_value_has_a_source() -> None:
    """A stored channel value is worked out by channel_metrics, or copied from the status."""
    worked_out = {f.name for f in fields(ChannelMetrics)}
    as_read = {f.name for f in fields(ChannelStatus)}
    for m in CHANNEL_COLUMNS:
        assert m.name in (as_read if m.from_status else worked_out), m.name
    assert {m.name for m in FROM_STATUS} <= as_read


def test_streamed_values_are_live_status_fields() -> None:
    live = set(ChannelStatusOut.model_fields)
    state = {f.name for f in fields(status.ChannelState)}
    for m in STREAMED:
        assert m.per == "channel"
        assert m.name in live and m.name in state, m.name


def test_gauges_are_exposition_points() -> None:
    point = {f.name for f in fields(metrics.ChannelPoint)}
    for m in GAUGES:
        assert m.gauge is not None and m.gauge.name.startswith("lagscope_")
        assert (m.gauge.attribute or m.name) in point, m.name
    assert [g[0] for g in metrics._CHANNEL_GAUGES] == [m.gauge.name for m in GAUGES if m.gauge]


def test_alert_lists_follow_the_catalog() -> None:
    assert typing.get_args(AlertMetricName) == ALERT_NAMES
    assert alert_readings.METRICS == ALERT_NAMES
    assert set(alert_readings.CHANNEL_METRICS) == {a.name for a in ALERTS if a.per == "channel"}
    assert alert_readings.WATCHDOG_METRICS == ("polling_stopped",)
    for m in STORED:
        assert m.alert is None or m.alert in alert_readings.CHANNEL_METRICS, m.name
