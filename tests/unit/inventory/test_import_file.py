"""The import file: lines for paths, duplicate keys, validation shared with the API's schemas,
passwords from the environment or a file (the store side: tests/integration/test_cli_import.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lagscope.api.schemas.import_file import plans_from
from lagscope.api.schemas.inventory import ClusterIn, InstanceIn
from lagscope.errors import InvalidInput
from lagscope.inventory.import_document import dotted, parse

YAML = """\
clusters:
  - name: shop
    instances:
      - name: db1
        host: 10.0.0.5
        user: mon
        role: source
      - name: db2
        host: 10.0.0.6
        port: 3307
        user: mon
"""


def test_paths_map_to_their_lines():
    doc = parse(YAML, "f.yaml", json_syntax=False)
    assert doc.where(("clusters", 0, "instances", 1, "port")) == (
        "clusters[0].instances[1].port (line 10)"
    )
    # A field the file lacks is placed at its parent item.
    assert doc.where(("clusters", 0, "instances", 0, "region")).endswith("(line 4)")
    assert dotted(("clusters", 2, "instances", 0, "port")) == "clusters[2].instances[0].port"


def test_json_lines_come_from_the_same_map():
    text = '{\n  "clusters": [\n    {"name": "a",\n     "poll_interval_s": 0.01}\n  ]\n}\n'
    doc = parse(text, "f.json", json_syntax=True)
    with pytest.raises(InvalidInput) as raised:
        plans_from(doc)
    assert "clusters[0].poll_interval_s (line 4)" in str(raised.value)


@pytest.mark.parametrize(
    ("text", "json_syntax", "says"),
    [
        ("clusters:\n  - name: a\n    name: b\n", False, "line 3: duplicate key 'name'"),
        ('{"clusters": [], "clusters": []}', True, "duplicate key 'clusters'"),
        ("clusters: [\n", False, "line 2 column 1"),
        ('{"clusters": [}', True, "line 1 column 15"),
    ],
)
def test_syntax_and_duplicates_say_where(text: str, json_syntax: bool, says: str):
    with pytest.raises(InvalidInput) as raised:
        parse(text, "f", json_syntax)
    assert says in str(raised.value)


def test_every_problem_is_listed_with_the_apis_own_rules():
    bad = YAML.replace("port: 3307", "port: 0").replace("host: 10.0.0.5", 'host: "a\\nb"')
    with pytest.raises(InvalidInput) as raised:
        plans_from(parse(bad, "f.yaml", json_syntax=False))
    message = str(raised.value)
    assert (
        "clusters[0].instances[1].port (line 10): Input should be greater than or equal to 1"
        in (message)
    )
    assert "clusters[0].instances[0].host (line 5): may not contain control characters" in message
    # The same constraints the API's schemas hold (not a copy that could drift).
    for field in ("host", "port", "name", "region", "tls", "tls_ca_path"):
        assert field in InstanceIn.model_fields
    assert "poll_interval_s" in ClusterIn.model_fields


def test_a_cluster_has_one_source_and_unique_names():
    two = YAML.replace("port: 3307", "port: 3307\n        role: source")
    with pytest.raises(InvalidInput, match="at most one source"):
        plans_from(parse(two, "f.yaml", json_syntax=False))
    twice = YAML.replace("name: db2", "name: db1")
    with pytest.raises(InvalidInput, match=r"unique in a cluster: \['db1'\]"):
        plans_from(parse(twice, "f.yaml", json_syntax=False))


def test_passwords_from_the_environment_or_a_file(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("LAGSCOPE_IMPORT_DB1_PW", "from-env")
    (tmp_path / "pw").write_text("from-file\n")
    text = YAML.replace(
        "role: source", "role: source\n        password_env: LAGSCOPE_IMPORT_DB1_PW"
    ).replace("port: 3307", f"port: 3307\n        password_file: {tmp_path / 'pw'}")
    (plan,) = plans_from(parse(text, "f.yaml", json_syntax=False), str(tmp_path))
    assert [i.password for i in plan.instances] == ["from-env", "from-file"]
    assert plan.heartbeat is None and plan.instances[0].path == "clusters[0].instances[0]"


def test_one_password_source_at_most_and_it_must_exist(monkeypatch):
    monkeypatch.delenv("LAGSCOPE_IMPORT_NOT_SET_PW", raising=False)
    both = YAML.replace(
        "role: source", "role: source\n        password: x\n        password_env: X"
    )
    with pytest.raises(InvalidInput, match="give one of password, password_env, password_file"):
        plans_from(parse(both, "f.yaml", json_syntax=False))
    unset = YAML.replace(
        "role: source", "role: source\n        password_env: LAGSCOPE_IMPORT_NOT_SET_PW"
    )
    with pytest.raises(InvalidInput, match="the variable LAGSCOPE_IMPORT_NOT_SET_PW is not set"):
        plans_from(parse(unset, "f.yaml", json_syntax=False))
    unreadable = YAML.replace(
        "role: source", "role: source\n        password_file: /nonexistent/pw"
    )
    with pytest.raises(InvalidInput, match="cannot read /nonexistent/pw"):
        plans_from(parse(unreadable, "f.yaml", json_syntax=False), "/nonexistent")


def test_a_password_left_out_is_none_not_empty():
    (plan,) = plans_from(parse(YAML, "f.yaml", json_syntax=False))
    assert [i.password for i in plan.instances] == [None, None]
