"""Time to catch up: backlog ÷ (apply rate − arrival rate) when the replica gains (docs/lag.md).

Backlog is in transactions (GTID counts) and rates in transactions per second, or both in
binlog bytes when there are no GTIDs: only the units' agreement matters here. The arrival rate
is the source's commit rate: what joins the backlog.

:func:`eta` reads one interval's rates (what history and alerts have: one sample).
:func:`eta_band` is the poller's: it keeps the last few intervals' rates (:class:`EtaMemory`,
stored on the channel) and says

- ``seconds`` at the window's mean rates, ``low_s``/``high_s`` at its mean gain plus/minus one
  standard deviation (``high_s`` None: at the slow end it would not catch up);
- ``never`` when apply ≤ arrival over the window: at these rates it does not catch up;
- basis ``transaction_progress`` while the applier is inside one large transaction: counted in
  transactions it applies nothing until that one commits, so the rates say nothing and "never"
  would be false. Its rows modified per second are shown; its total is rarely known (MariaDB does
  not say, MySQL only where the row-apply stages are instrumented), and then the time is unknown
  rather than guessed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from lagscope.collectors.snapshot import ChannelStatus, InstanceSnapshot

# Intervals the band is made of, and how old the oldest may be (a gap in polling drops them).
ETA_WINDOW = 10
ETA_WINDOW_S = 60.0
# An applier transaction open this long is a large transaction for the ETA's purpose: at a poll
# a second, a normal transaction is never seen open across polls this long.
LARGE_TRX_S = 5.0

BASIS_RATES = "rates"
BASIS_TRANSACTION_PROGRESS = "transaction_progress"


@dataclass(frozen=True, slots=True)
class Eta:
    """``seconds`` to catch up (None if not catching up or unknown); if falling behind, how fast.

    ``low_s``/``high_s``: the band (``high_s`` None when the slow end does not catch up);
    ``never``: at the current apply and arrival rates it does not catch up; ``basis``: what the
    figures rest on ("rates", "transaction_progress", None when nothing is known). While a large
    transaction applies: its rows modified so far, per second, and its total when known."""

    seconds: float | None
    catching_up: bool
    falling_behind_per_s: float | None
    low_s: float | None = None
    high_s: float | None = None
    never: bool = False
    basis: str | None = None
    trx_rows_done: int | None = None
    trx_rows_per_s: float | None = None
    trx_rows_total: int | None = None


def eta(backlog: int | None, apply_rate: float | None, source_rate: float | None) -> Eta:
    """ETA from the backlog and the two rates of the same interval (no band: one interval)."""
    if backlog is None:
        return Eta(None, False, None)
    # Counts are never negative by construction; <= keeps a stray negative from reading "behind".
    if backlog <= 0:
        return Eta(0.0, True, None, 0.0, 0.0, basis=BASIS_RATES)
    if apply_rate is None or source_rate is None:
        return Eta(None, False, None)
    gain_per_s = apply_rate - source_rate
    if gain_per_s > 0:
        seconds = backlog / gain_per_s
        return Eta(seconds, True, None, seconds, seconds, basis=BASIS_RATES)
    # source − apply rather than −gain: equal rates give 0.0, not −0.0.
    return Eta(None, False, source_rate - apply_rate, never=True, basis=BASIS_RATES)


@dataclass(frozen=True, slots=True)
class TrxProgress:
    """The applier's open transaction at one poll (rows modified so far; total when known)."""

    trx_id: str
    rows_done: int
    at: float  # epoch s, the poll
    age_s: float  # how long it has been open (server's start, or first seen by us)
    rows_total: int | None = None


@dataclass(frozen=True, slots=True)
class EtaMemory:
    """What the band remembers between polls: ``rates`` (at, apply, arrival), oldest first, and
    the applier transaction last seen (for its rows per second)."""

    rates: tuple[tuple[float, float, float], ...] = ()
    trx: TrxProgress | None = None

    def to_json(self) -> dict[str, Any]:
        trx = self.trx
        return {
            "rates": [[round(a, 3), round(x, 6), round(y, 6)] for a, x, y in self.rates],
            "trx": None
            if trx is None
            else [trx.trx_id, trx.rows_done, trx.at, round(trx.age_s, 3), trx.rows_total],
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any] | None) -> EtaMemory:
        if not raw:
            return cls()
        try:
            rates = tuple((float(a), float(x), float(y)) for a, x, y in raw.get("rates") or ())
            t = raw.get("trx")
            trx = (
                None if not t else TrxProgress(str(t[0]), int(t[1]), float(t[2]), float(t[3]), t[4])
            )
        except (TypeError, ValueError):
            return cls()  # an older or damaged memory: start again, as after a gap
        return cls(rates, trx)


def eta_band(
    backlog: int | None,
    apply_rate: float | None,
    source_rate: float | None,
    memory: EtaMemory,
    at: float,
    applying: TrxProgress | None = None,
) -> tuple[Eta, EtaMemory]:
    """The ETA with its band at ``at``, and the memory for the next poll."""
    rates = tuple(r for r in memory.rates if at - r[0] <= ETA_WINDOW_S and r[0] < at)
    if apply_rate is not None and source_rate is not None:
        rates = (*rates, (at, apply_rate, source_rate))
    rates = rates[-ETA_WINDOW:]
    trx = _same_trx_since(memory.trx, applying)
    remembered = EtaMemory(rates, trx)
    if backlog is None:
        return Eta(None, False, None), remembered
    if backlog <= 0:
        return Eta(0.0, True, None, 0.0, 0.0, basis=BASIS_RATES), remembered
    if applying is not None and trx is not None and trx.age_s >= LARGE_TRX_S:
        return _by_transaction(backlog, memory.trx, trx, rates), remembered
    if not rates:
        return Eta(None, False, None), remembered
    return _by_rates(backlog, rates), remembered


def _same_trx_since(before: TrxProgress | None, now: TrxProgress | None) -> TrxProgress | None:
    """``now``, aged at least since we first saw the same transaction."""
    if now is None:
        return None
    if before is not None and before.trx_id == now.trx_id:
        return replace(now, age_s=max(now.age_s, before.age_s + (now.at - before.at)))
    return now


def _gains(rates: tuple[tuple[float, float, float], ...]) -> tuple[float, float]:
    gains = [a - s for _, a, s in rates]
    mean = sum(gains) / len(gains)
    spread = (
        math.sqrt(sum((g - mean) ** 2 for g in gains) / (len(gains) - 1)) if len(gains) > 1 else 0.0
    )
    return mean, spread


def _by_rates(backlog: int, rates: tuple[tuple[float, float, float], ...]) -> Eta:
    mean, spread = _gains(rates)
    if mean <= 0:
        # source − apply rather than −gain: equal rates give 0.0, not −0.0.
        return Eta(None, False, max(0.0, -mean), never=True, basis=BASIS_RATES)
    fast, slow = mean + spread, mean - spread
    return Eta(
        backlog / mean,
        True,
        None,
        low_s=backlog / fast,
        high_s=backlog / slow if slow > 0 else None,
        basis=BASIS_RATES,
    )


def _by_transaction(
    backlog: int,
    before: TrxProgress | None,
    now: TrxProgress,
    rates: tuple[tuple[float, float, float], ...],
) -> Eta:
    per_s = None
    if before is not None and before.trx_id == now.trx_id and now.at > before.at:
        per_s = max(0.0, (now.rows_done - before.rows_done) / (now.at - before.at))
    unknown = Eta(
        None,
        False,
        None,
        basis=BASIS_TRANSACTION_PROGRESS,
        trx_rows_done=now.rows_done,
        trx_rows_per_s=per_s,
        trx_rows_total=now.rows_total,
    )
    if now.rows_total is None or not per_s:
        return unknown
    this_one = max(0, now.rows_total - now.rows_done) / per_s
    rest = backlog - 1
    if rest <= 0:
        return replace(unknown, seconds=this_one, catching_up=True, low_s=this_one, high_s=this_one)
    mean, spread = _gains(rates) if rates else (0.0, 0.0)
    if mean <= 0:
        # This transaction ends in ``this_one`` s; what follows it, at these rates, never does.
        return replace(unknown, low_s=this_one)
    slow = mean - spread
    return replace(
        unknown,
        seconds=this_one + rest / mean,
        catching_up=True,
        low_s=this_one + rest / (mean + spread),
        high_s=this_one + rest / slow if slow > 0 else None,
    )


def applier_transaction(status: ChannelStatus, replica: InstanceSnapshot) -> TrxProgress | None:
    """The open transaction of this channel's applier, when the cause readings saw one.

    The applier threads of the channel are its workers' threads; a replica with one channel and
    no worker rows (a serial applier) owns every applier transaction read. The age is measured on
    the replica's own clock (its start vs the server's now), so no clock difference enters."""
    evidence = replica.evidence
    if evidence is None or not evidence.transactions:
        return None
    threads = {w.thread_id for w in replica.workers if w.channel == status.channel}
    if threads:
        owned = [t for t in evidence.transactions if t.thread_id in threads]
    elif len(replica.channels) == 1:
        owned = list(evidence.transactions)
    else:
        return None
    if not owned:
        return None
    trx = max(owned, key=lambda t: t.rows_modified or 0)  # the parallel worker doing the most
    at = replica.taken_at.timestamp()
    server_now = at + (replica.clock.offset_s or 0.0)
    age = max(0.0, server_now - trx.started_at) if trx.started_at is not None else 0.0
    return TrxProgress(trx.trx_id, trx.rows_modified or 0, at, age)


def eta_to_json(e: Eta | None) -> dict[str, Any] | None:
    """The ETA as the store keeps it on the channel (``channels.eta``) for the status to serve."""
    if e is None:
        return None
    return {
        "seconds": e.seconds,
        "catching_up": e.catching_up,
        "falling_behind_per_s": e.falling_behind_per_s,
        "low_s": e.low_s,
        "high_s": e.high_s,
        "never": e.never,
        "basis": e.basis,
        "trx_rows_done": e.trx_rows_done,
        "trx_rows_per_s": e.trx_rows_per_s,
        "trx_rows_total": e.trx_rows_total,
    }


def eta_from_json(raw: Mapping[str, Any] | None) -> Eta | None:
    if not raw:
        return None
    return Eta(
        seconds=raw.get("seconds"),
        catching_up=bool(raw.get("catching_up")),
        falling_behind_per_s=raw.get("falling_behind_per_s"),
        low_s=raw.get("low_s"),
        high_s=raw.get("high_s"),
        never=bool(raw.get("never")),
        basis=raw.get("basis"),
        trx_rows_done=raw.get("trx_rows_done"),
        trx_rows_per_s=raw.get("trx_rows_per_s"),
        trx_rows_total=raw.get("trx_rows_total"),
    )
