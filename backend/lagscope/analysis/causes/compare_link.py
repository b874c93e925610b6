"""Is the far replica behind because of the network? Yes, no, or not measurably different.

Two replicas of one source under the same load, over one window: the far one is behind because
of its link when it lags more than the near one *and* the extra sits on the receiving side (more
not yet received). A difference is only a difference beyond the noise of the samples: the larger
of the two sides' spread (interquartile range scaled to a standard deviation, robust to the
ramps and spikes of a lag series) and the poll's resolution. Within it the answer is *not
measurably different*, and the sentence says so (issue 19 item 4: a 0.3 s difference between two
replicas lagging ~48 s with a spread of ~10 s is no difference).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from lagscope.analysis.causes import words
from lagscope.analysis.stats import percentile

# IQR / 1.349 is the standard deviation of a normal distribution with that IQR.
_IQR_TO_SIGMA = 1.349
# Fewer samples than this on a side tell nothing about its spread.
MIN_SAMPLES = 3
# Below a second of median lag (and a backlog within its resolution) a replica is not behind.
BEHIND_LAG_S = 1.0


class LinkAnswer(enum.StrEnum):
    YES = "yes"
    NO = "no"
    NOT_MEASURABLY_DIFFERENT = "not_measurably_different"
    UNKNOWN = "unknown"  # too few samples, or no backlog split for a side


@dataclass(frozen=True, slots=True)
class LinkSide:
    """One replica over the window: its lag samples (seconds) and its backlog not yet received
    per sample (transactions or bytes; the same unit on both sides)."""

    replica: str
    region: str = ""
    lag_s: Sequence[float] = ()
    not_received: Sequence[float] = ()


@dataclass(frozen=True, slots=True)
class LinkVerdict:
    answer: LinkAnswer
    sentence: str
    lag_difference_s: float | None = None  # far − near, medians
    lag_noise_s: float | None = None
    not_received_difference: float | None = None  # far − near, medians
    not_received_noise: float | None = None


def spread(values: Sequence[float]) -> float:
    """A robust standard deviation: the interquartile range / 1.349 (0.0 for < 2 values)."""
    q1, q3 = percentile(values, 0.25), percentile(values, 0.75)
    if q1 is None or q3 is None or len(values) < 2:
        return 0.0
    return (q3 - q1) / _IQR_TO_SIGMA


def _median(values: Sequence[float]) -> float:
    found = percentile(values, 0.5)
    return 0.0 if found is None else found


def _noise(a: Sequence[float], b: Sequence[float], resolution: float) -> float:
    return max(spread(a), spread(b), resolution)


def _name(side: LinkSide, role: str) -> str:
    where = ", ".join(p for p in (role, side.region) if p)
    return f"{side.replica} ({where})" if where else side.replica


def far_behind_because_of_network(
    near: LinkSide,
    far: LinkSide,
    *,
    resolution_s: float = 1.0,
    backlog_resolution: float = 1.0,
    backlog_unit: str = "transactions",
) -> LinkVerdict:
    """Answer "is ``far`` behind because of the network?" with ``near`` as the control.

    ``resolution_s``: the lag measurement's resolution (the poll interval, or the heartbeat's);
    ``backlog_resolution``: the not-received backlog's (e.g. what the source writes in one poll
    interval, since the two replicas are read a moment apart); ``backlog_unit``: its unit in
    words ("transactions", "bytes")."""
    n, f = _name(near, "near"), _name(far, "far")
    if len(near.lag_s) < MIN_SAMPLES or len(far.lag_s) < MIN_SAMPLES:
        return LinkVerdict(
            LinkAnswer.UNKNOWN,
            f"Too few lag readings to compare {f} with {n} "
            f"({len(far.lag_s)} and {len(near.lag_s)}, at least {MIN_SAMPLES} each needed).",
        )
    near_lag, far_lag = _median(near.lag_s), _median(far.lag_s)
    lag_diff = far_lag - near_lag
    lag_noise = _noise(near.lag_s, far.lag_s, resolution_s)
    figures = f"median lag {far_lag:.1f} s vs {near_lag:.1f} s"
    if far_lag < BEHIND_LAG_S and near_lag < BEHIND_LAG_S:
        return LinkVerdict(
            LinkAnswer.NO,
            f"No: neither {f} nor {n} was behind in this window ({figures}).",
            lag_diff,
            lag_noise,
        )
    if abs(lag_diff) <= lag_noise:
        return LinkVerdict(
            LinkAnswer.NOT_MEASURABLY_DIFFERENT,
            f"Not measurably different: {f} and {n} lag alike ({figures}; the "
            f"{abs(lag_diff):.1f} s difference is within the ±{lag_noise:.1f} s their readings "
            "vary by), so what holds them back is shared, not the far one's link.",
            lag_diff,
            lag_noise,
        )
    if lag_diff < 0:
        return LinkVerdict(
            LinkAnswer.NO,
            f"No: {f} lags less than {n} ({figures}, beyond the ±{lag_noise:.1f} s their "
            "readings vary by), so its link holds nothing back.",
            lag_diff,
            lag_noise,
        )
    if len(near.not_received) < MIN_SAMPLES or len(far.not_received) < MIN_SAMPLES:
        return LinkVerdict(
            LinkAnswer.UNKNOWN,
            f"{f} lags more than {n} ({figures}), but which part was not yet received was not "
            "measured (it needs GTIDs on both), so the link cannot be told from applying.",
            lag_diff,
            lag_noise,
        )
    near_nr, far_nr = _median(near.not_received), _median(far.not_received)
    nr_diff = far_nr - near_nr
    nr_noise = _noise(near.not_received, far.not_received, backlog_resolution)
    backlog = f"{words.count(far_nr)} vs {words.count(near_nr)} {backlog_unit} not yet received"
    if nr_diff > nr_noise:
        return LinkVerdict(
            LinkAnswer.YES,
            f"Yes: {f} lags more than {n} ({figures}, beyond the ±{lag_noise:.1f} s their "
            f"readings vary by) and the extra waits on receiving ({backlog}): the link to it "
            "is the limit.",
            lag_diff,
            lag_noise,
            nr_diff,
            nr_noise,
        )
    return LinkVerdict(
        LinkAnswer.NO,
        f"No: {f} lags more than {n} ({figures}) but receives as promptly ({backlog}, a "
        f"difference within the ±{words.count(nr_noise)} they vary by): what holds it back is "
        "on the replica, applying.",
        lag_diff,
        lag_noise,
        nr_diff,
        nr_noise,
    )
