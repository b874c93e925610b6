"""Statements in causes: digests by default, the full text only where kept and only for editors;
every stored text cleaned."""

from __future__ import annotations

from types import MappingProxyType

from lagscope.analysis.causes import words
from lagscope.analysis.causes.model import Cause, Finding
from lagscope.analysis.causes.serial import finding_to_json
from lagscope.analysis.tick.causes import without_full_text
from lagscope.history.episodes import clean_evidence

FULL = "UPDATE app.users SET email = 'alice@example.com', card = '4111\x00' WHERE id = 7"
DIGEST = "UPDATE app.users SET email = ?, card = ? WHERE id = ?"


def _finding() -> Finding:
    evidence = {"blocker_thread_id": 9, **words.statement_evidence("blocker_statement", FULL)}
    return Finding(
        Cause.BLOCKED_BY_SESSION,
        0.95,
        f"held by session 9 (statement {words.quote(words.statement(FULL))})\u202e",
        "Ask the owner to commit.",
        MappingProxyType(evidence),
    )


def test_the_evidence_holds_the_digest_and_the_full_text_apart() -> None:
    evidence = _finding().evidence
    assert evidence["blocker_statement"] == DIGEST
    assert evidence["blocker_statement_text"] == " ".join(FULL.split())
    assert "alice" not in _finding().sentence


def test_without_keeping_full_text_only_the_digest_is_stored() -> None:
    stored = finding_to_json(without_full_text(_finding()))
    assert stored["evidence"] == {"blocker_thread_id": 9, "blocker_statement": DIGEST}
    assert "alice" not in str(stored)


def test_what_is_stored_is_cleaned() -> None:
    stored = finding_to_json(_finding())
    assert "\x00" not in str(stored) and "\u202e" not in str(stored)
    assert stored["evidence"]["blocker_statement_text"].endswith("'4111\ufffd' WHERE id = 7")
    assert stored["sentence"].endswith("⟨U+202E⟩")


def test_viewers_never_get_the_full_text_and_old_rows_are_digested_on_reading() -> None:
    stored = finding_to_json(_finding())["evidence"]
    assert "blocker_statement_text" not in clean_evidence(stored)
    assert clean_evidence(stored, full_text=True)["blocker_statement_text"].startswith("UPDATE")
    # A row stored before digests: its statement is digested when read.
    legacy = {"blocker_statement": FULL, "waiting_statement": "DELETE FROM t WHERE id = 5"}
    assert clean_evidence(legacy) == {
        "blocker_statement": DIGEST,
        "waiting_statement": "DELETE FROM t WHERE id = ?",
    }
