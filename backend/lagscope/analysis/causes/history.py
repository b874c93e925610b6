"""What diagnosis remembers between polls: the memory brought up to a poll (:func:`observe`),
and the memory to keep after it (:func:`remember`).

The memory is a JSON-able dict (:class:`~.model.DiagnosisMemory`) that any worker can pick up:
the classes of the last few thread states (so "most of the recent polls" is decided within
``RECENT`` polls), the last backlog figures (growing or not), the apply rates seen (the replica's
measured capacity), the transaction being applied and when it was first seen, and the wait the
applier is in and since when. The poll's view the rules read is :class:`~.seen.Seen`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from lagscope.analysis.causes.model import CauseInputs, DiagnosisMemory
from lagscope.analysis.causes.seen import (
    NO_WINDOWS,
    WINDOWS,
    Seen,
    applier_class,
    io_class,
    worker_class,
)

# A memory older than this many poll intervals (or 30 s) describes another situation: dropped.
STALE_INTERVALS = 10
_STALE_MIN_S = 30.0
MEMORY_VERSION = 1


def observe(inputs: CauseInputs, memory: DiagnosisMemory) -> Seen:
    """The memory brought up to this poll (a stale or foreign memory starts afresh)."""
    raw, windows = _recalled(inputs, memory)
    seen = Seen(
        inputs,
        behind_polls=list(windows["behind"]),
        io=list(windows["io"]),
        sql=list(windows["sql"]),
        not_received=list(windows["nr"]),
        trx_behind=list(windows["tb"]),
        apply_rates=list(windows["apply"]),
        retried=list(windows["retried"]),
        workers=list(windows["workers"]),
        trx=raw.get("trx"),
        wait=raw.get("wait"),
        burst_since=raw.get("burst_since"),
        source_rates=list(windows["src"]),
        burst_base=raw.get("burst_base"),
        lags=list(windows["lag"]),
        pace=list(windows["pace"]),
        catching=raw.get("catching"),
        main_named_at=raw.get("main_at"),
        stored=windows,
    )
    _push_threads(seen)
    _push_figures(seen)
    workers = seen.channel_workers()
    if workers:
        classes = [worker_class(w) for w in workers]
        row = (classes.count("applying"), classes.count("waiting"), len(classes))
        seen.workers = _push(seen, "workers", seen.workers, row)
    seen.trx = _track_trx(seen)
    return seen


def _recalled(
    inputs: CauseInputs, memory: DiagnosisMemory
) -> tuple[Mapping[str, Any], Mapping[str, tuple[Any, ...]]]:
    """The memory's fields and windows, or none when it is stale, foreign or from another
    version."""
    raw = memory.data
    last_at = raw.get("at")
    fresh = (
        raw.get("v") != MEMORY_VERSION
        or not isinstance(last_at, int | float)
        or inputs.at <= last_at
        or inputs.at - last_at > max(_STALE_MIN_S, STALE_INTERVALS * inputs.interval_s)
    )
    if fresh:
        windows: Mapping[str, tuple[Any, ...]] = NO_WINDOWS
        raw = MappingProxyType({})
    elif memory.windows_parsed:
        windows = raw
    else:
        windows = _parse_windows(raw)
    return raw, windows


def _push_threads(seen: Seen) -> None:
    """This poll's verdict and thread states into their windows."""
    status = seen.inputs.status
    seen.behind_polls = _push(seen, "behind", seen.behind_polls, "b" if seen.behind else "-")
    if status is not None:
        seen.io = _push(seen, "io", seen.io, io_class(status.io_thread_state))
        seen.sql = _push(seen, "sql", seen.sql, applier_class(seen, status.sql_thread_state))
        if status.retried_transactions is not None:
            point = (seen.inputs.at, status.retried_transactions)
            seen.retried = _push(seen, "retried", seen.retried, point)


def _push_figures(seen: Seen) -> None:
    """This poll's backlog, lag and rates into their windows (rates rounded as kept)."""
    at, metrics = seen.inputs.at, seen.inputs.metrics
    if metrics.not_received is not None:
        point = (at, metrics.not_received)
        seen.not_received = _push(seen, "nr", seen.not_received, point)
    if metrics.trx_behind is not None:
        seen.trx_behind = _push(seen, "tb", seen.trx_behind, (at, metrics.trx_behind))
    if metrics.lag_s is not None:
        lag = (at, metrics.lag_s)
        seen.lags = _push(seen, "lag", seen.lags, lag, (at, round(metrics.lag_s, 3)))
    if metrics.apply_rate is not None:
        rate = metrics.apply_rate
        seen.apply_rates = _push(seen, "apply", seen.apply_rates, rate, round(rate, 3))
    if metrics.source_rate is not None:
        rate = metrics.source_rate
        seen.source_rates = _push(seen, "src", seen.source_rates, rate, round(rate, 3))
    trx, applied, written = metrics.trx_behind, metrics.apply_rate, metrics.source_rate
    if trx is not None and applied is not None and written is not None:
        pace = (at, trx, applied, written)
        kept = (at, trx, round(applied, 3), round(written, 3))
        seen.pace = _push(seen, "pace", seen.pace, pace, kept)


def _parse_windows(raw: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    """The windows of a memory read back from the store (JSON lists) as :func:`remember`
    keeps them: tuples of typed values."""
    return {
        "behind": tuple(raw.get("behind") or ()),
        "io": tuple(raw.get("io") or ()),
        "sql": tuple(raw.get("sql") or ()),
        "nr": tuple((float(a), int(v)) for a, v in raw.get("nr") or ()),
        "tb": tuple((float(a), int(v)) for a, v in raw.get("tb") or ()),
        "apply": tuple(float(r) for r in raw.get("apply") or ()),
        "retried": tuple((float(a), int(v)) for a, v in raw.get("retried") or ()),
        "workers": tuple((int(a), int(w), int(t)) for a, w, t in raw.get("workers") or ()),
        "src": tuple(float(r) for r in raw.get("src") or ()),
        "lag": tuple((float(a), float(v)) for a, v in raw.get("lag") or ()),
        "pace": tuple(
            (float(a), int(t), float(x), float(y)) for a, t, x, y in raw.get("pace") or ()
        ),
    }


_SAME = object()


def _push(seen: Seen, key: str, values: list[Any], value: Any, kept: Any = _SAME) -> list[Any]:
    """``values`` with this poll's ``value`` last, within its window; what the memory keeps of
    it (``kept``: rounded, for the rates) is noted for :func:`remember`."""
    seen.pushed[key] = value if kept is _SAME else kept
    return [*values, value][-WINDOWS[key] :]


def _trx_key(seen: Seen) -> tuple[str, float | None, int | None] | None:
    """The applier transaction that has been open longest: its identity, start (poller clock)
    and rows modified. From INNODB_TRX when read, else MySQL's APPLYING_TRANSACTION."""
    trxs = seen.transactions()
    if trxs:
        oldest = min(trxs, key=lambda t: t.started_at if t.started_at is not None else float("inf"))
        return (f"trx:{oldest.trx_id}", seen.server_time(oldest.started_at), oldest.rows_modified)
    applying = [w for w in seen.channel_workers() if w.applying_trx]
    if applying:
        oldest_w = min(
            applying,
            key=lambda w: w.applying_start_apply_ts or float("inf"),
        )
        start = seen.server_time(oldest_w.applying_start_apply_ts)
        return (f"gtid:{oldest_w.applying_trx}", start, None)
    return None


def _track_trx(seen: Seen) -> dict[str, Any] | None:
    key = _trx_key(seen)
    if key is None:
        replica = seen.inputs.replica
        if replica is not None and replica.evidence is None:
            # The cause readings were not taken this poll: keep what was seen, name nothing
            # from it (``trx_current`` stays False).
            return seen.trx
        return None
    seen.trx_current = True
    ident, started, rows = key
    before = seen.trx
    if before is not None and before.get("key") == ident:
        return {**before, "at": seen.at, "rows": rows, "started": started or before.get("started")}
    return {
        "key": ident,
        "first_at": seen.at,
        "started": started,
        "rows0": rows,
        "at": seen.at,
        "rows": rows,
    }


def remember(seen: Seen, wait: dict[str, Any] | None) -> DiagnosisMemory:
    """The memory to store after this poll. Its windows are the ones it came with plus this
    poll's values (rounded where the JSON keeps rates to three decimals), as tuples: the next
    poll reads them without parsing, and :meth:`DiagnosisMemory.to_json` lists them."""
    data: dict[str, Any] = {
        "v": MEMORY_VERSION,
        "at": seen.at,
        "trx": seen.trx,
        "wait": wait,
        "burst_since": seen.burst_since,
        "burst_base": seen.burst_base if seen.burst_since is not None else None,
        "catching": seen.catching,
        "main_at": seen.main_named_at,
    }
    stored, pushed = seen.stored, seen.pushed
    for key, n in WINDOWS.items():
        prior = stored[key]
        data[key] = (*prior, pushed[key])[-n:] if key in pushed else prior
    return DiagnosisMemory(MappingProxyType(data), windows_parsed=True)


def wait_since(seen: Seen, kind: str | None) -> tuple[dict[str, Any] | None, float | None]:
    """Track how long the applier has been in one kind of wait (metadata lock, a DDL state…):
    the memory entry to keep and the seconds so far (None when not waiting)."""
    if kind is None:
        return None, None
    before = seen.wait
    if before is not None and before.get("kind") == kind:
        since = float(before.get("since", seen.at))
        return {"kind": kind, "since": since}, seen.at - since
    return {"kind": kind, "since": seen.at}, 0.0
