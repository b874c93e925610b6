"""One channel's causes for one poll (CAUSES.md's table), from :class:`~.model.CauseInputs`.

FIRST CUT (contract): only the causes the verdict already knows. The rules of CAUSES.md are
filled in by the analysis work of issue 19.
"""

from __future__ import annotations

from lagscope.analysis.causes.model import Cause, CauseInputs, DiagnosisMemory, Finding
from lagscope.analysis.codes import Verdict

_FROM_VERDICT = {
    Verdict.STOPPED: Cause.STOPPED,
    Verdict.BROKEN: Cause.BROKEN,
    Verdict.UNREACHABLE: Cause.UNREACHABLE,
    Verdict.DELAYED_BY_DESIGN: Cause.DELAYED_BY_DESIGN,
}


def diagnose(
    inputs: CauseInputs, memory: DiagnosisMemory
) -> tuple[tuple[Finding, ...], DiagnosisMemory]:
    """The findings of this poll (strongest first) and the memory for the next poll."""
    verdict = inputs.metrics.verdict
    cause = _FROM_VERDICT.get(verdict)
    if cause is not None:
        return (Finding(cause, 1.0, f"{inputs.replica_name}: {cause.words}.", ""),), memory
    if verdict in (Verdict.RECEIVE_BOUND, Verdict.APPLY_BOUND):
        finding = Finding(Cause.UNEXPLAINED, 0.2, f"{inputs.replica_name} is behind.", "")
        return (finding,), memory
    return (), memory
