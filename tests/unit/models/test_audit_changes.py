"""Two flushes of one object in one transaction make one audit entry (models/auditing.py)."""

from __future__ import annotations

from lagscope.models.auditing import CATALOG, merged
from lagscope.models.inventory import Instance
from lagscope.models.users import User


def test_a_secret_set_at_creation_then_replaced_in_the_same_transaction_is_set():
    assert merged("create", {"name": [None, "c"]}, {"pw": "replaced"}) == {
        "name": [None, "c"],
        "pw": "set",
    }


def test_a_secret_set_then_cleared_before_anyone_saw_it_is_not_recorded():
    assert merged("create", {"pw": "set"}, {"pw": "cleared"}) == {}


def test_an_update_keeps_the_first_before_and_the_last_after():
    assert merged("update", {"region": ["eu", "us"]}, {"region": ["us", "ap"]}) == {
        "region": ["eu", "ap"]
    }


def test_an_update_back_to_where_it_started_is_no_change():
    assert merged("update", {"region": ["eu", "us"]}, {"region": ["us", "eu"]}) == {}


def test_a_secret_replaced_twice_in_an_update_is_replaced_and_a_new_field_joins():
    assert merged("update", {"pw": "replaced"}, {"pw": "replaced", "port": [1, 2]}) == {
        "pw": "replaced",
        "port": [1, 2],
    }


def test_polling_bookkeeping_is_not_a_recorded_field():
    fields = set(CATALOG[Instance].fields(Instance))
    assert {"host", "port", "user", "password_enc", "enabled"} <= fields
    assert not fields & {"last_polled_at", "last_error", "gtid_executed", "login_failures"}
    assert "password_hash" in set(CATALOG[User].fields(User))
