"""Grafana's annotation body routed to a cluster and a server (journal/grafana.py)."""

from __future__ import annotations

import pytest

from lagscope.errors import InvalidInput
from lagscope.journal.grafana import routing


def test_the_request_names_the_cluster_and_the_tags_stay() -> None:
    found = routing(["deploy", "v1.2"], "shop")
    assert (found.cluster, found.instance, found.tags) == ("shop", None, ("deploy", "v1.2"))


def test_routing_tags_are_taken_out() -> None:
    found = routing(["deploy", "cluster:shop", " instance:far ", "api"], None)
    assert (found.cluster, found.instance, found.tags) == ("shop", "far", ("deploy", "api"))


def test_the_request_and_a_tag_agreeing_is_fine() -> None:
    assert routing(["cluster:shop"], "shop").cluster == "shop"


@pytest.mark.parametrize(
    ("tags", "cluster", "says"),
    [
        (["cluster:shop", "cluster:other"], None, "more than one cluster tag"),
        (["instance:a", "instance:b"], "shop", "more than one instance tag"),
        (["cluster:other"], "shop", "the request says 'shop', a tag says 'other'"),
    ],
)
def test_contradictions_are_refused_with_the_reason(
    tags: list[str], cluster: str | None, says: str
) -> None:
    with pytest.raises(InvalidInput, match=says):
        routing(tags, cluster)


def test_no_cluster_anywhere_is_left_to_the_caller() -> None:
    assert routing(["deploy"], None).cluster is None
