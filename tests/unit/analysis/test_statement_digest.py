"""Statement digests: literals become ``?``, comments go, whitespace collapses, and no value
leaks whatever the statement's quoting, comments or cut."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lagscope.analysis.statement_digest import digest

SECRET = "s3cr3t"


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (
            "UPDATE app.users SET email = 'alice@example.com' WHERE id = 42",
            "UPDATE app.users SET email = ? WHERE id = ?",
        ),
        (
            "SELECT * FROM t WHERE a = 'it''s' AND b = 'x\\'y'",
            "SELECT * FROM t WHERE a = ? AND b = ?",
        ),
        ('SELECT "double \\" quoted"', "SELECT ?"),
        ("SELECT 'back\\\\' , 1", "SELECT ? , ?"),
        ("SELECT 1 -- card 4111\nFROM t", "SELECT ? FROM t"),
        ("SELECT 1 # hash comment 4111\nFROM t", "SELECT ? FROM t"),
        ("SELECT /* c 4111 */ 1 /*!50000 'x' */", "SELECT ?"),
        ("SELECT a--1 FROM t", "SELECT a-? FROM t"),
        ("SELECT 0xDEADBEEF, X'4142', x'41', b'0101', B'1', 0b101", "SELECT ?, ?, ?, ?, ?, ?"),
        ("SELECT -5, a - 5, (-1.5e-3), 2e+3, .5", "SELECT ?, a - ?, (?), ?, ?"),
        ("WHERE x = N'abc' AND y = _utf8mb4'zz'", "WHERE x = ? AND y = ?"),
        ("SELECT 'a\x00b', 'ok'", "SELECT ?, ?"),
        ("UPDATE t SET a = 'cut in the mid", "UPDATE t SET a = ?"),
        ("UPDATE t SET a = /* unterminated 4111", "UPDATE t SET a ="),
        ("SELECT a FROM t WHERE id IN (1, 2, 'x')", "SELECT a FROM t WHERE id IN (...)"),
        ("INSERT INTO t VALUES (1,'a'),(2,'b')", "INSERT INTO t VALUES (?,?) , ..."),
        ("SELECT   a,\n\t b FROM   t", "SELECT a, b FROM t"),
        (
            "SELECT `we``ird 5`, @v, @@global.x, t1.c2 FROM db1.t2",
            "SELECT `we``ird 5`, @v, @@global.x, t1.c2 FROM db1.t2",
        ),
    ],
)
def test_digests(statement: str, expected: str) -> None:
    assert digest(statement) == expected
    assert digest(expected) == expected


# Whole tokens of valid SQL, with the quoting and comments that trip pattern-based maskers.
_TOKENS = st.lists(
    st.sampled_from(
        [
            "SELECT",
            " ",
            "'it''s'",
            "'a\\'b'",
            '"x\\"y"',
            "'back\\\\'",
            "'--'",
            "'#'",
            "'/*'",
            "-- c 'x\n",
            '# c "x\n',
            "/* '\" */",
            "/*! 1 */",
            "\n",
            "x",
            "(",
            ")",
            ",",
            "=",
            "-",
            "0x1F",
            "X'41'",
            "b'1'",
            "N'n'",
            "`q``'`",
            "'\x00'",
            "IN",
            "@v",
            ".",
            "1e-3",
        ]
    ),
    max_size=30,
)


@given(_TOKENS, st.sampled_from(["'", '"']))
def test_no_literal_leaks_whatever_surrounds_it(tokens: list[str], quote: str) -> None:
    """A value in a literal never shows, after any mix of quoting, escapes and comments."""
    statement = f"{''.join(tokens)}\nWHERE c = {quote}{SECRET}{quote} AND d = 4242"
    shown = digest(statement)
    assert SECRET not in shown
    assert "4242" not in shown


@given(st.integers(min_value=0, max_value=len(SECRET) + 2))
def test_a_statement_cut_inside_a_literal_shows_no_part_of_it(cut: int) -> None:
    statement = f"UPDATE t SET a = 'x\\'{SECRET}'"
    assert digest(statement[: len(statement) - cut]).endswith("= ?")


@given(st.text(max_size=200))
def test_digest_is_idempotent(statement: str) -> None:
    once = digest(statement)
    assert digest(once) == once
