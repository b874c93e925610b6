"""Stored codes: the numbers are a storage format, so they are pinned here one by one."""

from __future__ import annotations

import pytest

from lagscope.analysis.codes import LagSource, Verdict, io_state_code, io_state_from_code
from lagscope.collectors.snapshot import IoState


@pytest.mark.parametrize(
    ("member", "code", "label"),
    [
        (Verdict.CAUGHT_UP, 0, "caught_up"),
        (Verdict.RECEIVE_BOUND, 1, "receive_bound"),
        (Verdict.APPLY_BOUND, 2, "apply_bound"),
        (Verdict.DELAYED_BY_DESIGN, 3, "delayed_by_design"),
        (Verdict.STOPPED, 4, "stopped"),
        (Verdict.BROKEN, 5, "broken"),
        (Verdict.UNREACHABLE, 6, "unreachable"),
    ],
)
def test_verdict_codes_and_labels(member: Verdict, code: int, label: str) -> None:
    assert int(member) == code
    assert Verdict(code) is member
    assert member.label == label


@pytest.mark.parametrize(
    ("member", "code", "label"),
    [
        (LagSource.HEARTBEAT, 0, "heartbeat"),
        (LagSource.APPLIER, 1, "applier"),
        (LagSource.SBM, 2, "seconds_behind_source"),
    ],
)
def test_lag_source_codes_and_labels(member: LagSource, code: int, label: str) -> None:
    assert int(member) == code
    assert member.label == label


@pytest.mark.parametrize(
    ("state", "code"),
    [(IoState.NO, 0), (IoState.YES, 1), (IoState.CONNECTING, 2), (IoState.PREPARING, 3)],
)
def test_io_state_round_trip(state: IoState, code: int) -> None:
    assert io_state_code(state) == code
    assert io_state_from_code(code) is state


def test_every_io_state_has_a_code() -> None:
    assert sorted(io_state_code(s) for s in IoState) == list(range(len(IoState)))


def test_unknown_io_state_code_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown IO state code 9"):
        io_state_from_code(9)
