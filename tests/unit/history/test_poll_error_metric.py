"""/metrics' lagscope_poll_error: one series per failing server, labelled with the failure's
kind; none for a server whose newest poll answered."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from lagscope.history.prometheus import InstancePoint, exposition


def _failing(*points: InstancePoint) -> set[tuple[str, str]]:
    text = exposition([], list(points)).decode()
    return {
        (s.labels["server"], s.labels["kind"])
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "lagscope_poll_error"
    }


def test_a_failing_server_has_one_series_with_its_kind_and_an_answering_one_none():
    odd = InstancePoint("c", "odd", "", up=False, error_kind="UnexpectedAnswer")
    gone = InstancePoint("c", "gone", "", up=False, error_kind="ServerUnreachable")
    fine = InstancePoint("c", "fine", "", up=True)
    assert _failing(odd, gone, fine) == {("odd", "UnexpectedAnswer"), ("gone", "ServerUnreachable")}
