"""Small-integer codes for enumerations stored in the database (verdicts, lag sources, IO state).

The numbers are part of the stored format: never renumber a member, only append new ones.
Labels are the snake_case names the API and the UI speak (docs/lag.md).
"""

from __future__ import annotations

import enum

from lagscope.collectors.snapshot import IoState


class Verdict(enum.IntEnum):
    """Why a channel is where it is, over a short window of polls (see :mod:`.verdict`)."""

    CAUGHT_UP = 0
    RECEIVE_BOUND = 1
    APPLY_BOUND = 2
    DELAYED_BY_DESIGN = 3
    STOPPED = 4
    BROKEN = 5
    UNREACHABLE = 6

    @property
    def label(self) -> str:
        return self.name.lower()


class LagSource(enum.IntEnum):
    """Which measurement the best lag came from (preference order: lag.best_lag)."""

    HEARTBEAT = 0
    APPLIER = 1
    SBM = 2
    # Appended (codes are stored): preferred before SBM, see lag.best_lag for the order.
    TIMELINE = 3

    @property
    def label(self) -> str:
        return _LAG_SOURCE_LABELS[self]


_LAG_SOURCE_LABELS = {
    LagSource.HEARTBEAT: "heartbeat",
    LagSource.APPLIER: "applier",
    # Spelled out: "sbm" is jargon, and our own code says source, never master.
    LagSource.SBM: "seconds_behind_source",
    LagSource.TIMELINE: "source_timeline",
}

_IO_STATE_CODES: dict[IoState, int] = {
    IoState.NO: 0,
    IoState.YES: 1,
    IoState.CONNECTING: 2,
    IoState.PREPARING: 3,
}
_IO_STATES_BY_CODE = {code: state for state, code in _IO_STATE_CODES.items()}


def io_state_code(state: IoState) -> int:
    """The stored code of an IO thread state: NO=0, YES=1, CONNECTING=2, PREPARING=3."""
    return _IO_STATE_CODES[state]


def io_state_from_code(code: int) -> IoState:
    """Inverse of :func:`io_state_code`; an unknown code is a :class:`ValueError`."""
    try:
        return _IO_STATES_BY_CODE[code]
    except KeyError:
        raise ValueError(f"unknown IO state code {code!r}") from None
