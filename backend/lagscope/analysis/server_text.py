"""Text from a monitored server or a user, made safe to store and to show.

Whatever a server sends (a session's statement, an error message, a thread state) and whatever
a user types (an annotation) reaches PostgreSQL, JSON columns, the UI, logs and webhook bodies.
Some characters break one of those or deceive a reader:

- NUL: PostgreSQL refuses it in ``text`` and ``jsonb`` (a whole tick's write would fail).
- Other C0/C1 control characters (and DEL): invisible, or they move a terminal's cursor.
- Bidirectional overrides, embeddings, isolates and marks: they reorder what a reader sees
  ("trojan source"), so a statement can look like another.
- Lone surrogates: not text at all; no UTF-8 encoder takes them.

:func:`clean_text` replaces each of them by something visible, so a reader learns that it was
there: a control character by U+FFFD, a bidi control by its code point in angle brackets
(``⟨U+202E⟩``), a lone surrogate by U+FFFD. Tab and newline are kept where the text may span
lines (``multiline=True``), turned into a space otherwise; CR LF and CR become LF. The result
never changes when cleaned again. HTML markup is left alone: it is text, and the UI renders
text, never HTML.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"

# Bidi embeddings/overrides (U+202A–U+202E), isolates (U+2066–U+2069), the LTR/RTL marks and
# the Arabic letter mark.
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)

_CONTROLS = "".join(chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)))
_UNSAFE = re.compile(
    "[" + re.escape(_CONTROLS) + "".join(BIDI_CONTROLS) + "\u2028\u2029\ud800-\udfff]"
)


def _visible(char: str, multiline: bool) -> str:
    if char in BIDI_CONTROLS:
        return f"⟨U+{ord(char):04X}⟩"
    if char in "\n\u2028\u2029":
        return "\n" if multiline else " "
    if char == "\t":
        return "\t" if multiline else " "
    return REPLACEMENT


def clean_text(text: str, *, multiline: bool = False) -> str:
    """``text`` with no NUL, no other control character, no bidi control and no lone surrogate
    (each made visible, see the module's note); idempotent."""
    if not text:
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: _visible(m.group(), multiline), text)


def clean_value(value: object, *, multiline: bool = False) -> object:
    """A JSON-like value with every string in it (keys too) cleaned; other values unchanged."""
    if isinstance(value, str):
        return clean_text(value, multiline=multiline)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v, multiline=multiline) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(v, multiline=multiline) for v in value]
    return value
