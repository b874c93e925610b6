"""Which instances a tick asks for cause readings on the store's word (ingest/tick.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from lagscope.analysis.codes import Verdict
from lagscope.ingest.tick import behind_at_last_tick
from lagscope.models import Channel, Cluster, Instance

T = datetime(2030, 1, 1, tzinfo=UTC)


def _instance(id_: int, *channels: Channel) -> Instance:
    instance = Instance(id=id_, name=f"i{id_}", host="127.0.0.1", port=3306, role="replica")
    instance.channels = list(channels)
    return instance


def _channel(classes: str, verdict: Verdict | None, gone: bool = False) -> Channel:
    return Channel(
        name="",
        recent_classes=classes,
        verdict=None if verdict is None else int(verdict),
        first_seen_at=T,
        gone_at=T if gone else None,
    )


def test_behind_by_the_last_poll_or_the_verdict() -> None:
    behind, apply, caught = Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND, Verdict.CAUGHT_UP
    cluster = Cluster(name="c")
    cluster.instances = [
        _instance(1, _channel("0,0", caught)),  # healthy
        _instance(2, _channel("0,0,2", caught)),  # its last poll behind, the window not yet
        _instance(3, _channel("1,0", behind)),  # the window still says behind
        _instance(4, _channel(f"0,{int(apply)}", apply, gone=True)),  # a removed channel
        _instance(5, _channel("", None), _channel("0,1", caught)),  # a second channel behind
        _instance(6, _channel("3,3", Verdict.DELAYED_BY_DESIGN)),  # delayed on purpose
        _instance(7),  # the source
    ]
    assert behind_at_last_tick(cluster) == {2, 3, 5}
