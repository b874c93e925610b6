"""Figures and server text as an operator reads them in a cause's sentence."""

from __future__ import annotations

from lagscope.analysis.statement_digest import digest
from lagscope.collectors.snapshot import EVIDENCE_TEXT_MAX

# Server text quoted inside a sentence is cut shorter than the evidence keeps it: the sentence
# is one line on a card, the evidence table shows the whole (bounded) text.
SENTENCE_QUOTE_MAX = 80


def seconds(value: float) -> str:
    """``2.3 s``, ``340 s``, ``12 min``, ``1.5 h``."""
    if value < 10:
        return f"{value:.1f} s"
    if value < 600:
        return f"{value:.0f} s"
    if value < 5400:
        return f"{value / 60:.0f} min"
    return f"{value / 3600:.1f} h"


def count(value: float) -> str:
    """``450``, ``12,000``, ``2.1 M``."""
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:.1f} M"
    return f"{value:,.0f}"


def per_s(value: float) -> str:
    """A transaction rate: ``3.4 trx/s``, ``1,200 trx/s``."""
    return f"{value:.1f} trx/s" if abs(value) < 10 else f"{value:,.0f} trx/s"


def bounded(text: str | None, limit: int = EVIDENCE_TEXT_MAX) -> str:
    """Server text as evidence: one line, at most ``limit`` characters (an ellipsis marks a cut)."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def quote(text: str | None) -> str:
    """Server text quoted in a sentence: short, in typographic quotes (server text often holds
    straight ones). Typographic quotes inside become straight ones, so a quote is exactly one
    ``“…”`` span: what a webhook body leaves out (alerts/payloads.py)."""
    inner = bounded(text, SENTENCE_QUOTE_MAX).replace("“", '"').replace("”", '"')
    return f"“{inner}”"


# Evidence keys holding a statement's full text (values included): kept only where an admin
# turns it on, shown only to editors. Every other key holding a statement holds its digest.
FULL_TEXT_SUFFIX = "statement_text"


def is_full_text(key: str) -> bool:
    return key.endswith(FULL_TEXT_SUFFIX)


def statement(text: str | None) -> str:
    """A statement as evidence: its digest (literals as ``?``), one line, bounded."""
    return bounded(digest(text or ""))


def statement_evidence(key: str, text: str | None) -> dict[str, str | None]:
    """``{key: digest, key_text: full text}`` (None when there is no statement)."""
    return {key: statement(text) or None, f"{key}_text": bounded(text) or None}


def named(replica: str, region: str) -> str:
    return f"{replica} ({region})" if region else replica
