"""What an import file may read besides itself: variables named LAGSCOPE_IMPORT_…, files inside
LAGSCOPE_PASSWORD_FILE_DIR; and YAML without anchors or aliases, refused before expansion.
(The command end to end: tests/integration/test_import_refusals.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lagscope.api.schemas.import_file import plans_from
from lagscope.errors import InvalidInput
from lagscope.inventory.import_document import MAX_BYTES, load, parse

ONE = """\
clusters:
  - name: shop
    instances:
      - name: db1
        host: 127.0.0.1
        user: mon
        role: source
        {source}
"""

# Billion laughs in YAML (315 bytes): nine lists of nine aliases each, 9^9 strings expanded.
ALIAS_BOMB = "a: &a [lo,lo,lo,lo,lo,lo,lo,lo,lo]\n" + "".join(
    f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def plan_password(source: str, directory: str = "/run/secrets") -> str | None:
    (plan,) = plans_from(parse(ONE.format(source=source), "f.yaml", json_syntax=False), directory)
    return plan.instances[0].password


@pytest.mark.parametrize(
    "name",
    [
        "LAGSCOPE_SECRET_KEY",  # the key that encrypts every stored password
        "LAGSCOPE_OLD_SECRET_KEYS",
        "LAGSCOPE_DATABASE_URL",
        "LAGSCOPE_ADMIN_PASSWORD",
        "HOME",
        "AWS_SECRET_ACCESS_KEY",
        "LAGSCOPE_IMPORT_",
        "LAGSCOPE_IMPORTX",
    ],
)
def test_a_variable_outside_the_import_prefix_is_never_read(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, "a-secret-of-the-operator")
    with pytest.raises(InvalidInput, match=f"password_env: {name} is not read"):
        plan_password(f"password_env: {name}")


def test_a_variable_with_the_import_prefix_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAGSCOPE_IMPORT_SHOP_DB1", "from-env")
    assert plan_password("password_env: LAGSCOPE_IMPORT_SHOP_DB1") == "from-env"


@pytest.fixture
def secrets_dir(tmp_path: Path) -> Path:
    inside = tmp_path / "secrets"
    inside.mkdir()
    (inside / "db1").write_text("from-file\n")
    (tmp_path / "outside").write_text("not-for-import\n")
    return inside


def test_a_file_inside_the_directory_is_read(secrets_dir: Path) -> None:
    assert plan_password(f"password_file: {secrets_dir / 'db1'}", str(secrets_dir)) == "from-file"


@pytest.mark.parametrize(
    "target",
    [
        "/etc/passwd",
        "{dir}/../outside",  # .. resolved before the check
        "{dir}/escape",  # a symbolic link inside, to a file outside
        "{dir}/escape-dir/outside",  # through a linked directory
        "relative/db1",
    ],
)
def test_a_file_outside_the_directory_is_never_read(secrets_dir: Path, target: str) -> None:
    (secrets_dir / "escape").symlink_to(secrets_dir.parent / "outside")
    (secrets_dir / "escape-dir").symlink_to(secrets_dir.parent)
    path = target.format(dir=secrets_dir)
    with pytest.raises(InvalidInput, match="password files must be inside") as refused:
        plan_password(f"password_file: {path}", str(secrets_dir))
    assert "not-for-import" not in str(refused.value)


def test_only_a_regular_file_is_read(secrets_dir: Path) -> None:
    # A FIFO would block the read for ever; a device would never end.
    os.mkfifo(secrets_dir / "pipe")
    with pytest.raises(InvalidInput, match="not a regular file"):
        plan_password(f"password_file: {secrets_dir / 'pipe'}", str(secrets_dir))


def test_no_directory_no_password_file(secrets_dir: Path) -> None:
    with pytest.raises(InvalidInput, match="LAGSCOPE_PASSWORD_FILE_DIR is empty"):
        plan_password(f"password_file: {secrets_dir / 'db1'}", "")


def test_the_alias_bomb_is_refused_at_its_first_anchor() -> None:
    assert len(ALIAS_BOMB.encode()) <= 318
    with pytest.raises(InvalidInput, match=r"line 1 column 4: an anchor \(&name\)"):
        parse(ALIAS_BOMB, "bomb.yaml", json_syntax=False)


@pytest.mark.parametrize(
    "text",
    [
        "clusters:\n  - &c {name: a}\n",
        "base: &b {user: mon}\nclusters: []\n",
        "clusters:\n  - <<: *b\n    name: a\n",  # an alias (undefined, even)
    ],
)
def test_anchors_aliases_and_merge_keys_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="anchors, aliases and merge keys are not accepted"):
        parse(text, "f.yaml", json_syntax=False)


def test_nesting_is_bounded() -> None:
    with pytest.raises(InvalidInput, match="nested deeper than"):
        parse("clusters: " + "[" * 5000 + "]" * 5000 + "\n", "f.yaml", json_syntax=False)


def test_a_file_is_read_up_to_the_cap_only(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * MAX_BYTES + "\n")
    with pytest.raises(InvalidInput, match=f"larger than {MAX_BYTES} bytes"):
        load(big)
