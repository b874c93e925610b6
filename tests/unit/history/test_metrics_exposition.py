"""The /metrics exposition over fixed points: edge values and label escaping.

Parsed back with prometheus_client's own parser, so the test checks what a scraper reads, and
on the raw text, so it checks the escaping the format prescribes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from prometheus_client.parser import text_string_to_metric_families

from lagscope.analysis.codes import LagSource, Verdict
from lagscope.history.prometheus import ChannelPoint, InstancePoint, exposition

AT = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            found.setdefault(s.name, []).append((s.labels, s.value))
    return found


def channel(**overrides) -> ChannelPoint:
    values = {
        "cluster": "lab",
        "server": "replica1",
        "channel": "",
        "region": "near",
        "ts": AT,
        "verdict": Verdict.CAUGHT_UP,
        "lag_s": 0.125,
        "lag_source": LagSource.HEARTBEAT,
        "seconds_behind_source": 0,
        "trx_behind": 0,
        "not_received": 0,
        "received_not_applied": 0,
        "apply_rate": 12.5,
        "io_running": True,
        "sql_running": True,
    }
    return ChannelPoint(**{**values, **overrides})


def test_a_caught_up_channel_and_its_instance():
    text = exposition(
        [channel()],
        [InstancePoint("lab", "replica1", "near", True, 0.0012, -0.003, AT)],
    ).decode()
    found = samples(text)
    labels = {"cluster": "lab", "server": "replica1", "channel": "", "region": "near"}
    assert found["lagscope_lag_seconds"] == [(labels, 0.125)]
    assert found["lagscope_seconds_behind_source"] == [(labels, 0.0)]
    assert found["lagscope_apply_rate_trx_per_second"] == [(labels, 12.5)]
    assert found["lagscope_io_running"] == [(labels, 1.0)]
    assert found["lagscope_last_sample_timestamp_seconds"] == [(labels, AT.timestamp())]
    verdicts = {s[0]["verdict"]: s[1] for s in found["lagscope_verdict"]}
    assert verdicts == {v.label: float(v is Verdict.CAUGHT_UP) for v in Verdict}
    sources = {s[0]["source"]: s[1] for s in found["lagscope_lag_source"]}
    assert sources == {
        "heartbeat": 1.0,
        "applier": 0.0,
        "source_timeline": 0.0,
        "seconds_behind_source": 0.0,
    }
    instance = {"cluster": "lab", "server": "replica1", "region": "near"}
    assert found["lagscope_up"] == [(instance, 1.0)]
    assert found["lagscope_poll_round_trip_seconds"] == [(instance, 0.0012)]
    assert found["lagscope_clock_offset_seconds"] == [(instance, -0.003)]
    assert found["lagscope_last_poll_timestamp_seconds"] == [(instance, AT.timestamp())]
    assert "# TYPE lagscope_lag_seconds gauge" in text


def test_null_values_are_left_out_not_zero():
    stopped = channel(
        verdict=Verdict.STOPPED,
        lag_s=None,
        lag_source=None,
        seconds_behind_source=None,  # the server said NULL: not "0 s behind"
        trx_behind=None,
        not_received=None,
        received_not_applied=None,
        apply_rate=None,
        io_running=True,
        sql_running=False,
    )
    down = InstancePoint("lab", "replica1", "near", False, None, None, None)
    found = samples(exposition([stopped], [down]).decode())
    for name in (
        "lagscope_lag_seconds",
        "lagscope_seconds_behind_source",
        "lagscope_trx_behind",
        "lagscope_not_received_trx",
        "lagscope_received_not_applied_trx",
        "lagscope_apply_rate_trx_per_second",
        "lagscope_poll_round_trip_seconds",
        "lagscope_clock_offset_seconds",
        "lagscope_last_poll_timestamp_seconds",
    ):
        assert name not in found, name
    assert [v for _, v in found["lagscope_sql_running"]] == [0.0]
    assert [v for _, v in found["lagscope_up"]] == [0.0]
    assert {s[0]["source"]: s[1] for s in found["lagscope_lag_source"]} == {
        s.label: 0.0 for s in LagSource
    }
    assert {s[0]["verdict"] for s in found["lagscope_verdict"] if s[1] == 1.0} == {"stopped"}


def test_label_values_are_escaped():
    name = 'ch "east"\\1\nx'
    text = exposition([channel(channel=name, region='r"\\')], []).decode()
    # The format escapes backslash, double quote and newline inside label values.
    assert 'channel="ch \\"east\\"\\\\1\\nx"' in text
    assert 'region="r\\"\\\\"' in text
    labels = samples(text)["lagscope_lag_seconds"][0][0]
    assert labels["channel"] == name and labels["region"] == 'r"\\'


def test_no_points_is_an_empty_but_valid_exposition():
    found = samples(exposition([], []).decode())
    assert found == {}


def test_current_causes_one_series_each_from_the_fixed_list():
    text = exposition(
        [
            channel(causes=("blocked_by_session", "large_transaction", "blocked_by_session")),
            channel(server="replica2", causes=("not_a_cause", "network")),
            channel(server="replica3"),
        ],
        [],
    ).decode()
    found = samples(text)["lagscope_channel_cause"]
    assert [(s[0]["server"], s[0]["cause"], s[1]) for s in found] == [
        ("replica1", "blocked_by_session", 1.0),
        ("replica1", "large_transaction", 1.0),
        ("replica2", "network", 1.0),
    ]
    assert set(found[0][0]) == {"cluster", "server", "channel", "region", "cause"}
    assert "# HELP lagscope_channel_cause 1 per cause" in text
    assert "clock_skew" in text.split("# HELP lagscope_channel_cause", 1)[1].split("\n", 1)[0]
