"""gtid_progress: one more per transaction, for both products."""

from __future__ import annotations

import pytest

from lagscope.analysis.progress import gtid_progress

UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
UUID_B = "4f22ab58-82db-22f2-af44-d91bb953a673"


def test_mysql_counts_every_interval_of_every_source() -> None:
    assert gtid_progress("mysql", f"{UUID_A}:1-5:7-9,{UUID_B}:1-100") == 5 + 3 + 100


def test_mysql_tagged_gtids_count_too() -> None:
    assert gtid_progress("mysql", f"{UUID_A}:1-5:etl:1-3") == 8


def test_mysql_grows_by_one_per_transaction() -> None:
    before = gtid_progress("mysql", f"{UUID_A}:1-41")
    assert gtid_progress("mysql", f"{UUID_A}:1-42") - before == 1


def test_empty_text_is_zero() -> None:
    assert gtid_progress("mysql", "") == 0
    assert gtid_progress("mariadb", "") == 0


def test_mariadb_sums_seq_no_over_domains() -> None:
    assert gtid_progress("mariadb", "0-1-2042,1-20-500,7-3-8") == 2042 + 500 + 8


def test_mariadb_server_id_does_not_count() -> None:
    # The same seq_no written by another server in the domain is the same progress.
    assert gtid_progress("mariadb", "0-99-10") == gtid_progress("mariadb", "0-1-10")


@pytest.mark.parametrize(
    ("product", "text"),
    [("mysql", "not-a-uuid:1-5"), ("mariadb", "0-1"), ("mariadb", "0-1-5,0-2-6")],
)
def test_invalid_text_raises(product: str, text: str) -> None:
    with pytest.raises(ValueError):
        gtid_progress(product, text)  # type: ignore[arg-type]


def test_unknown_product_raises() -> None:
    with pytest.raises(ValueError, match="unknown product"):
        gtid_progress("postgres", "")  # type: ignore[arg-type]
