"""One channel's causes for one poll (docs/causes.md), from :class:`~.model.CauseInputs`.

Pure: the rules read the inputs and the channel's memory (:mod:`.history`), and return the
findings strongest first with the memory for the next poll. The rules by family:

- :mod:`.rules_state`: unreachable, broken, stopped, delayed by design, clock skew;
- :mod:`.rules_receive`: the link to the source, the receiver's relay-log fsyncs;
- :mod:`.rules_applier`: a session blocking the applier, row lookups without a usable key,
  one large transaction, a schema change;
- :mod:`.rules_apply`: durability-bound serial apply, one thread where the source's groups allow
  more, parallel workers waiting on each other, a source writing above the replica's capacity.

A backlog draining after its cause ended or after a step is ``CATCHING_UP`` (:mod:`.catching_up`),
listed first. A channel behind that no rule explains gets ``UNEXPLAINED``: said as such, never
guessed. A caught-up channel gets no finding (a clock skew excepted: it is true whether or not
the channel lags, and it is what makes a heartbeat figure suspect).
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.catching_up import catching_up, note_main_named
from lagscope.analysis.causes.history import observe, remember
from lagscope.analysis.causes.model import Cause, CauseInputs, DiagnosisMemory, Finding
from lagscope.analysis.causes.rules_applier import applier_findings
from lagscope.analysis.causes.rules_apply import (
    durable_apply,
    ordering,
    parallel_of,
    serial_apply,
    source_burst,
)
from lagscope.analysis.causes.rules_receive import network, relay_log_durability
from lagscope.analysis.causes.rules_state import clock_skew, state_findings
from lagscope.analysis.causes.seen import Seen
from lagscope.analysis.channel_metrics import ChannelMetrics
from lagscope.analysis.verdict import small_backlog

# Below this lag the applier rules stay quiet unless the verdict already says behind.
APPLIER_LAG_S = 1.0
# Below this lag (and with a small backlog) there is nothing left for "unexplained" to explain.
UNEXPLAINED_MIN_LAG_S = 1.0
# Causes inside the replica that explain its apply capacity: with one of them named, the load
# itself is not called a "source burst".
_REPLICA_SIDE = frozenset(
    {
        Cause.DURABLE_APPLY,
        Cause.SERIAL_APPLY,
        Cause.ORDERING,
        Cause.LARGE_TRANSACTION,
        Cause.DDL,
        Cause.BLOCKED_BY_SESSION,
        Cause.NO_USABLE_KEY,
        Cause.APPLIER_WAIT,
    }
)


def diagnose(
    inputs: CauseInputs, memory: DiagnosisMemory
) -> tuple[tuple[Finding, ...], DiagnosisMemory]:
    """The findings of this poll (strongest first) and the memory for the next poll."""
    seen = observe(inputs, memory)
    findings: list[Finding] = []
    wait = None
    fixed = state_findings(seen)
    if fixed is not None:
        findings.extend(fixed)
        seen.burst_since = None
    else:
        if seen.behind or (inputs.metrics.lag_s or 0.0) >= APPLIER_LAG_S:
            applier = applier_findings(seen)
            findings.extend(applier.findings)
            wait = applier.wait
        parallel = parallel_of(seen)
        for found in (
            relay_log_durability(seen),
            network(seen),
            durable_apply(seen, parallel),
            serial_apply(seen, parallel),
            ordering(seen, parallel),
        ):
            if found is not None:
                findings.append(found)
        burst = None
        if not any(f.cause in _REPLICA_SIDE for f in findings):
            burst = source_burst(seen)
            if burst is not None:
                findings.append(burst)
        if burst is None:
            seen.burst_since = None
        backlog = _backlog_now(inputs.metrics)
        draining = catching_up(seen, findings, backlog)
        if draining is not None:
            findings.append(draining)
        elif seen.held_behind and not findings and backlog:
            findings.append(_unexplained(seen))
    skew = clock_skew(seen)
    if skew is not None:
        findings.append(skew)
    note_main_named(seen, findings)
    return _strongest_first(findings), remember(seen, wait)


def _strongest_first(findings: list[Finding]) -> tuple[Finding, ...]:
    """One finding per cause (the most confident: a row lock and a metadata lock at once are one
    "blocked by a session"), strongest first, a clock skew (true whether or not it holds the
    replica back) last. Catching up comes first: it is the channel's state, and the rules still
    named while it drains are what limits the drain."""
    best: dict[Cause, Finding] = {}
    for found in findings:
        found = replace(found, confidence=round(found.confidence, 2))
        if found.cause not in best or found.confidence > best[found.cause].confidence:
            best[found.cause] = found
    return tuple(
        sorted(
            best.values(),
            key=lambda f: (
                f.cause is Cause.CLOCK_SKEW,
                f.cause is not Cause.CATCHING_UP,
                -f.confidence,
            ),
        )
    )


def _backlog_now(metrics: ChannelMetrics) -> bool:
    """Something to explain in this poll: the verdict's window can still say behind for a poll
    after the backlog is gone (seen on the live lab: "0.1 s behind, 0 transactions" named
    unexplained at an episode's end)."""
    if metrics.trx_behind is not None and not small_backlog(
        metrics.trx_behind, metrics.source_rate
    ):
        return True
    return metrics.lag_s is None or metrics.lag_s >= UNEXPLAINED_MIN_LAG_S


def _unexplained(seen: Seen) -> Finding:
    metrics, status = seen.inputs.metrics, seen.inputs.status
    lag = f" {words.seconds(metrics.lag_s)}" if metrics.lag_s is not None else ""
    split = ""
    if metrics.not_received is not None and metrics.received_not_applied is not None:
        split = (
            f" ({words.count(metrics.not_received)} transactions not yet received, "
            f"{words.count(metrics.received_not_applied)} received and waiting to be applied)"
        )
    hints = []
    queueing, polls = seen.count(seen.io, "queueing")
    if queueing >= 2:
        hints.append(
            f"its receiver was busy writing the relay log in {queueing} of the last {polls} "
            "polls without fsyncing each event: its disk may be the limit"
        )
    if status is not None and status.sql_delay > 0:
        hints.append(f"it is also delayed on purpose by {words.seconds(status.sql_delay)}")
    hint = f"; {'; '.join(hints)}" if hints else ""
    problems = seen.problems()
    needs = "; ".join(f"{k}: {v}" for k, v in sorted(problems.items())) or None
    return Finding(
        Cause.UNEXPLAINED,
        0.3,
        f"{seen.name} is{lag} behind{split}; no known cause matched the readings{hint}.",
        "Look at the replica's thread states and the source's write rate around this time; the "
        "lag chart's backlog split shows which side waits.",
        MappingProxyType(
            {
                "lag_s": metrics.lag_s,
                "trx_behind": metrics.trx_behind,
                "not_received": metrics.not_received,
                "received_not_applied": metrics.received_not_applied,
                "io_state": words.bounded(status.io_thread_state) if status else None,
                "sql_state": words.bounded(status.sql_thread_state) if status else None,
                "apply_rate": metrics.apply_rate,
                "source_rate": metrics.source_rate,
            }
        ),
        words.bounded(needs) if needs else None,
    )
