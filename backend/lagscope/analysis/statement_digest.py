"""A statement with its values taken out: what Lagscope keeps and shows of a server's SQL.

A session's statement and the replicated statement an applier runs carry customers' data in
their literals (an e-mail address, a card number, a password hash). :func:`digest` keeps the
statement's shape, the way ``performance_schema``'s statement digests do:

- string literals (``'…'``, ``"…"``, with ``N``/``_charset`` introducers), numbers (signs
  included where the minus is unary), hex (``0x…``, ``X'…'``) and bit (``0b…``, ``b'…'``)
  literals become ``?``;
- a list of nothing but values, ``IN (?, ?, ?)``, becomes ``IN (...)``; the rows after the first
  of a ``VALUES (…), (…)`` become ``, ...``;
- comments (``-- ``, ``#``, ``/* … */``, hints and versioned comments alike) are dropped;
- whitespace collapses to one space.

It works on tokens, not patterns: a quote inside a string (doubled or escaped by a backslash), a
NUL byte in a literal, or text cut in the middle of a literal (the server's 500-character cut)
never lets a value through; an unterminated string or comment swallows the rest. Identifiers
(``name``, `` `quoted` ``, ``@var``) and placeholders (``?``) stay, so a digest digested again
is unchanged.
"""

from __future__ import annotations

import re

VALUE = "?"
# A token after which a minus sign is binary (it subtracts from what came before).
_OPERAND_END = re.compile(r"[\w`)\]?$]$")
_WORD = re.compile(r"[0-9A-Za-z_$\u0080-\uffff]+")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_EXPONENT = re.compile(r"\d+[eE]$")
_HEX = re.compile(r"0x[0-9A-Fa-f]+$|0b[01]+$")
_STRING_PREFIX = re.compile(r"[NnXxBb]$|_[A-Za-z0-9]+$")
_IN_LIST = re.compile(r"\bIN\s*\(\s*\?(?:\s*,\s*\?)*\s*\)", re.IGNORECASE)
_ROW = r"\(\s*\?(?:\s*,\s*\?)*\s*\)"
_MORE_ROWS = re.compile(rf"({_ROW})(?:\s*,\s*{_ROW})+")


def _skip_string(text: str, i: int) -> int:
    """The index after the string literal opening at ``i`` (its end when unterminated)."""
    quote = text[i]
    i += 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == quote:
            if i + 1 < len(text) and text[i + 1] == quote:  # '' inside ''
                i += 2
                continue
            return i + 1
        i += 1
    return len(text)


def _skip_quoted_name(text: str, i: int) -> int:
    end = i + 1
    while True:
        end = text.find("`", end)
        if end < 0:
            return len(text)
        if end + 1 < len(text) and text[end + 1] == "`":
            end += 2
            continue
        return end + 1


def _comment_end(text: str, i: int) -> int | None:
    """Where the comment opening at ``i`` ends (None: no comment opens there)."""
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    dashes = text.startswith("--", i) and (i + 2 == len(text) or text[i + 2] <= " ")
    if text[i] == "#" or dashes:
        end = text.find("\n", i)
        return len(text) if end < 0 else end + 1
    return None


def _gap(out: list[str]) -> None:
    """One ``" "`` for any run of whitespace and comments."""
    if out and out[-1] != " ":
        out.append(" ")


def _value(out: list[str]) -> None:
    """A value's ``?``, taking the sign before it when the sign is unary."""
    # A unary minus or plus belongs to the value: "= -5" is "= ?", "a - 5" is "a - ?".
    j = len(out) - 1
    while j >= 0 and out[j] == " ":
        j -= 1
    if j >= 0 and out[j] in ("-", "+"):
        k = j - 1
        while k >= 0 and out[k] == " ":
            k -= 1
        if k < 0 or not _OPERAND_END.search(out[k]) or _is_keyword(out[k]):
            del out[j:]  # the space before the sign, if any, stays
    out.append(VALUE)


def _tokens(text: str) -> list[str]:
    """The statement's tokens with values as ``?``; ``" "`` where whitespace or a comment was."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace() or char == "\x00":
            _gap(out)
            i += 1
            continue
        end = _comment_end(text, i)
        if end is not None:
            _gap(out)
            i = end
            continue
        if char in "'\"":
            if out and _STRING_PREFIX.match(out[-1]):  # N'…', X'…', b'…', _utf8mb4'…'
                out.pop()
            i = _skip_string(text, i)
            _value(out)
            continue
        if char == "`":
            end = _skip_quoted_name(text, i)
            out.append(text[i:end])
            i = end
            continue
        if char == "@":
            match = _WORD.match(text, i + 1 + (text[i + 1 : i + 2] == "@"))
            end = match.end() if match else i + 1
            out.append(text[i:end])
            i = end
            continue
        word = _WORD.match(text, i)
        if word is not None:
            token = word.group()
            i = word.end()
            if char.isdigit() and _is_number(token, text[i : i + 1]):
                i = _number_tail(text, i)
                _value(out)
            else:
                out.append(token)
            continue
        if char == "." and i + 1 < n and text[i + 1].isdigit() and not _after_name(out):
            word = _WORD.match(text, i + 1)
            i = _number_tail(text, word.end() if word else i + 1)
            _value(out)
            continue
        out.append(char)
        i += 1
    return out


def _is_number(token: str, following: str) -> bool:
    """A word that starts with a digit is a number (``12``, ``1e5``, ``2e`` before ``-3``) or
    a hex/bit literal; anything else is a name (MySQL allows ``1abc``)."""
    if _EXPONENT.match(token) and following in ("+", "-"):
        return True
    return bool(_HEX.match(token) or _NUMBER.match(token))


def _after_name(out: list[str]) -> bool:
    """A dot right after a name (no space) qualifies it (``t.1col``) rather than open ``.5``."""
    return bool(out) and out[-1] != " " and bool(_OPERAND_END.search(out[-1]))


def _number_tail(text: str, i: int) -> int:
    """Past a decimal part or an exponent sign the word match stopped at (``1.5``, ``2e-3``)."""
    while i < len(text) and (
        (text[i] == "." and i + 1 < len(text) and text[i + 1].isdigit())
        or (text[i] in "+-" and text[i - 1] in "eE" and i + 1 < len(text) and text[i + 1].isdigit())
    ):
        word = _WORD.match(text, i + 1)
        i = word.end() if word else i + 1
    return i


_KEYWORDS_BEFORE_VALUES = frozenset(
    {
        "AND",
        "OR",
        "NOT",
        "WHERE",
        "SET",
        "SELECT",
        "VALUES",
        "IN",
        "BY",
        "THEN",
        "ELSE",
        "WHEN",
        "LIMIT",
        "OFFSET",
        "RETURN",
        "IS",
        "LIKE",
        "BETWEEN",
        "XOR",
        "DIV",
        "MOD",
        "CASE",
        "ON",
    }
)


def _is_keyword(token: str) -> bool:
    return token.upper() in _KEYWORDS_BEFORE_VALUES


def digest(statement: str) -> str:
    """``statement`` with every literal as ``?``, comments dropped, whitespace collapsed."""
    if not statement:
        return ""
    text = "".join(_tokens(statement)).strip()
    text = _IN_LIST.sub(lambda m: m.group()[: m.group().index("(")] + "(...)", text)
    return _MORE_ROWS.sub(r"\1 , ...", text)
