"""MySQL's commit parents from GTID events, built byte for byte from the documented layout
(libbinlogevents ``Gtid_event``: flags 1, sid 16, gno 8, lt_type 1, last_committed 8,
sequence_number 8, then MySQL 8.0's commit timestamps; ``Query_event``'s post-header). The
protocol path itself runs against the lab's MariaDB in tests/integration/test_parallelism.py."""

from __future__ import annotations

import struct
import zlib

from lagscope.analysis.parallel_apply import from_parents, speedups
from lagscope.collectors.binlog_dump import (
    HEADER,
    MARIADB_GTID_EVENT,
    Gtid,
    Span,
    begins,
    decode_event,
    window_from_spans,
)

SID = bytes.fromhex("3e11fa4771ca11e19e33c80aa9429562")


def event(kind: int, body: bytes, end_pos: int, checksum: bool = True) -> bytes:
    size = HEADER.size + len(body) + (4 if checksum else 0)
    raw = HEADER.pack(1_700_000_000, kind, 1, size, end_pos, 0) + body
    return raw + (struct.pack("<I", zlib.crc32(raw)) if checksum else b"")


def mysql_gtid(gno: int, last_committed: int, sequence_number: int) -> bytes:
    # MySQL 8.0 appends immediate/original commit timestamps (7 bytes each) and more: ignored.
    return (
        b"\x00" + SID + struct.pack("<Q", gno) + b"\x02"
        + struct.pack("<qq", last_committed, sequence_number) + b"\x00" * 14
    )  # fmt: skip


def query(text: bytes, db: bytes = b"shop") -> bytes:
    status = b"\x00\x00\x00\x00\x00"  # one Q_FLAGS2_CODE status variable
    return struct.pack("<IIBHH", 7, 0, len(db), 0, len(status)) + status + db + b"\x00" + text


def test_a_mysql_gtid_event_gives_its_parent_and_sequence_number() -> None:
    raw = event(33, mysql_gtid(181, 40, 43), end_pos=5_000)
    kind, log_pos, gtid = decode_event(raw, checksum=True)
    assert (kind, log_pos) == (33, 5_000)
    assert gtid == Gtid(5_000 - len(raw), last_committed=40, sequence_number=43)
    # Without the checksum trailer the same body decodes the same.
    plain = event(33, mysql_gtid(181, 40, 43), end_pos=5_000, checksum=False)
    assert decode_event(plain, checksum=False)[2] == Gtid(5_000 - len(plain), 40, 43)


def test_a_mariadb_gtid_event_gives_its_commit_id_only_when_flagged() -> None:
    grouped = struct.pack("<QIB", 180016, 0, 0x02 | 0x08) + struct.pack("<Q", 181385)
    assert decode_event(event(MARIADB_GTID_EVENT, grouped, 900), True)[2] == Gtid(
        900 - (19 + len(grouped) + 4), commit_id=181385
    )
    alone = struct.pack("<QIB", 180017, 0, 0x08)
    gtid = decode_event(event(MARIADB_GTID_EVENT, alone, 990), True)[2]
    assert gtid is not None and gtid.commit_id is None


def test_begin_is_told_from_a_commit_or_ddl_by_its_first_bytes() -> None:
    assert begins(event(2, query(b"BEGIN"), 100))
    assert not begins(event(2, query(b"COMMIT"), 100))
    assert not begins(event(2, query(b"ALTER TABLE t ADD c INT", db=b""), 100))


def test_whole_transactions_carry_their_parents_and_sizes_the_cut_one_is_dropped() -> None:
    spans = [
        Span(Gtid(1000, 0, 1), 1500),
        Span(Gtid(1500, 0, 2), 1800),
        Span(Gtid(1800, 2, 3), 2600),
        Span(Gtid(2600, 2, 4), None),  # its BEGIN was read, its Xid was past the window
    ]
    window = window_from_spans(spans, events=14)
    assert window.parents == [(0, 1, 500), (0, 2, 300), (2, 3, 800)]
    assert window.groups == [] and window.events == 14


def test_mysql_parents_simulate_like_the_logical_clock_rule() -> None:
    # Sequence numbers are per binlog file: a window from the middle starts at 41; a parent
    # older than the window (35) committed before it began.
    parents = [(35, 41, 1.0), (35, 42, 1.0), (42, 43, 1.0), (42, 44, 1.0)]
    trxs = from_parents(parents)
    assert [(t.sequence_number, t.last_committed) for t in trxs] == [(1, 0), (2, 0), (3, 2), (4, 2)]
    # Two rounds of two on two workers: 2×; no more on four.
    assert speedups(trxs, (1, 2, 4)) == {1: 1.0, 2: 2.0, 4: 2.0}
