"""Text from servers and users: no NUL, no control character, no bidi control, no lone
surrogate survives cleaning, and cleaning twice changes nothing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lagscope.analysis.server_text import BIDI_CONTROLS, REPLACEMENT, clean_text, clean_value

_ANY = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200)
_RISKY = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            "<",
            "'",
            "\x00",
            "\t",
            "\n",
            "\r",
            "\x1b",
            "\x7f",
            "\x85",
            "\x9f",
            "\u2028",
            "\ud800",
            "\udfff",
            *BIDI_CONTROLS,
        ]
    ),
    max_size=60,
)


def _unsafe(char: str, multiline: bool) -> bool:
    code = ord(char)
    if multiline and char in "\t\n":
        return False
    return (
        code < 0x20
        or 0x7F <= code < 0xA0
        or char in BIDI_CONTROLS
        or char in "\u2028\u2029"
        or 0xD800 <= code <= 0xDFFF
    )


@given(st.one_of(_ANY, _RISKY), st.booleans())
def test_nothing_unsafe_survives_and_cleaning_is_idempotent(text: str, multiline: bool) -> None:
    cleaned = clean_text(text, multiline=multiline)
    assert not any(_unsafe(c, multiline) for c in cleaned), repr(cleaned)
    assert clean_text(cleaned, multiline=multiline) == cleaned
    cleaned.encode("utf-8")  # no lone surrogate left: every store takes it


def test_what_was_there_stays_visible() -> None:
    assert clean_text("pay\u202eusd") == "pay⟨U+202E⟩usd"
    assert clean_text("a\x00b\x1bc") == f"a{REPLACEMENT}b{REPLACEMENT}c"
    assert clean_text("one\r\ntwo\tthree") == "one two three"
    assert clean_text("one\r\ntwo\tthree", multiline=True) == "one\ntwo\tthree"
    assert clean_text("lone \ud800") == f"lone {REPLACEMENT}"


def test_markup_is_kept_as_text() -> None:
    assert clean_text("<b>bold</b> & <script>x</script>") == "<b>bold</b> & <script>x</script>"


def test_json_values_are_cleaned_keys_included() -> None:
    raw = {"k\x00": ["v\u2066", 3, None, {"n": "x\x00"}], "ok": True}
    assert clean_value(raw) == {
        f"k{REPLACEMENT}": ["v⟨U+2066⟩", 3, None, {"n": f"x{REPLACEMENT}"}],
        "ok": True,
    }
