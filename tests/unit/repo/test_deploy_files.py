"""docker-compose.yml, the Dockerfile and deploy/ hold together.

There is no Docker engine here, so the files are read as Compose and Docker would read them:
every service has an image or a build context that exists, its command is one our CLI (or the
proxy's) accepts, every file it mounts exists, every variable it passes is one Lagscope reads,
secrets are required variables, dependencies are gated on healthchecks that exist, and the
Dockerfile copies only what is there. The lab's SQL and my.cnf are run against MariaDB in
tests/integration/test_deploy_lab.py.
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from lagscope.cli import main as cli
from lagscope.config import Settings
from lagscope.lab import proxy

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
LAB = ROOT / "deploy" / "lab"
SECRETS = ("POSTGRES_PASSWORD", "LAGSCOPE_SECRET_KEY", "LAGSCOPE_ADMIN_PASSWORD")
CORE = {"postgres", "redis", "migrate", "api", "worker", "beat", "heartbeat"}
LAB_SERVICES = {"lab-source", "lab-far-link", "lab-replica1", "lab-replica2", "lab-scenario"}
# Read by the `lagscope scenario` command, not by Settings.
SCENARIO_ENV = {f"LAGSCOPE_SCENARIO_{k}_PASSWORD" for k in ("ADMIN", "MONITOR", "HEARTBEAT")}
_VAR = re.compile(r"\$\{(?P<name>[A-Z0-9_]+)(?:(?P<op>:[-?])(?P<arg>[^}]*))?\}")


def interpolate(text: str) -> str:
    """Compose's interpolation with an environment that sets only the required secrets."""

    def value(match: re.Match[str]) -> str:
        if match["op"] == ":-":
            return match["arg"]
        return f"test-{match['name'].lower()}-0123456789abcdefghijklmnopqrstuvwxyz"

    return _VAR.sub(value, text.replace("$$", "\0")).replace("\0", "$")


@pytest.fixture(scope="module")
def raw() -> str:
    return COMPOSE.read_text()


@pytest.fixture(scope="module")
def compose(raw: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(interpolate(raw))
    return loaded


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def test_the_services_and_the_lab_profile(services):
    assert set(services) == CORE | LAB_SERVICES
    for name, service in services.items():
        assert service.get("profiles", []) == (["lab"] if name in LAB_SERVICES else []), name
    # Scalable: nothing that would clash between two worker containers.
    assert "container_name" not in services["worker"] and "ports" not in services["worker"]
    assert services["migrate"]["restart"] == "no"  # a one-shot
    assert "/var/lib/postgresql/data" in services["postgres"]["volumes"][0]


def test_every_service_has_an_image_or_a_build_that_exists(services):
    for name, service in services.items():
        assert service.get("image") or service.get("build"), name
        if "build" in service:
            context = ROOT / service["build"]
            assert (context / "Dockerfile").is_file(), name
        image = service.get("image", "")
        assert not image.endswith(":latest") and ":" in image, f"{name}: pin {image!r}"


def lagscope_args(service: dict[str, Any]) -> list[str] | None:
    command = service.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if command and command[0] == "lagscope":
        return [str(part) for part in command[1:]]
    return None


def test_every_lagscope_command_parses_with_our_cli(services):
    checked = 0
    for name, service in services.items():
        args = lagscope_args(service)
        if args is None:
            continue
        subcommand = cli.commands.get(args[0])
        assert subcommand is not None, f"{name}: no `lagscope {args[0]}`"
        # Parse without running: options, types and choices are checked as at start-up.
        with click.Context(cli, info_name="lagscope") as parent:
            subcommand.make_context(args[0], list(args[1:]), parent=parent)
        checked += 1
    assert checked >= 6  # migrate, api, worker, beat, heartbeat, lab-scenario


def test_the_far_link_runs_the_labs_latency_proxy(services):
    command = services["lab-far-link"]["command"]
    assert command[:3] == ["python", "-m", "lagscope.lab.proxy"]
    args = proxy.parse_args(command[3:])
    assert (args.listen_host, args.listen_port) == ("0.0.0.0", 3306)
    assert (args.target_host, args.target_port) == ("lab-source", 3306)
    assert args.delay_ms == 50
    replica2 = services["lab-replica2"]["environment"]
    assert replica2["LAB_SOURCE_HOST"] == "lab-far-link"
    assert services["lab-replica1"]["environment"]["LAB_SOURCE_HOST"] == "lab-source"


def test_scenario_addresses_every_lab_server_and_each_has_an_id(services):
    args = lagscope_args(services["lab-scenario"])
    assert args is not None
    targets = " ".join(args)
    for server in ("lab-source", "lab-replica1", "lab-replica2"):
        assert f"={server}:3306" in targets
    ids = [services[s]["command"][1] for s in ("lab-source", "lab-replica1", "lab-replica2")]
    assert ids == ["--server-id=1", "--server-id=2", "--server-id=3"]


def test_every_variable_passed_is_one_lagscope_reads(services):
    known = {f"LAGSCOPE_{name.upper()}" for name in Settings.model_fields} | SCENARIO_ENV
    for name, service in services.items():
        env = service.get("environment") or {}
        assert isinstance(env, dict), f"{name}: use a mapping, so anchors merge"
        for key in env:
            if key.startswith("LAGSCOPE_"):
                assert key in known, f"{name}: {key} is read by nothing"
    core_env = services["api"]["environment"]
    assert core_env["LAGSCOPE_DATABASE_URL"].startswith("postgresql+psycopg://lagscope:")
    assert core_env["LAGSCOPE_DATABASE_URL"].endswith("@postgres:5432/lagscope")
    assert core_env["LAGSCOPE_BROKER_URL"] == "redis://redis:6379/0"
    for worker_side in ("worker", "beat", "heartbeat", "migrate", "lab-scenario"):
        assert services[worker_side]["environment"]["LAGSCOPE_SECRET_KEY"], worker_side


def test_secrets_are_required_variables(raw):
    for secret in SECRETS:
        uses = [m for m in _VAR.finditer(raw) if m["name"] == secret]
        assert uses, secret
        assert all(m["op"] == ":?" for m in uses), f"{secret} must be ${{{secret}:?…}}"
    # The lab's one password cannot be (compose interpolates inactive profiles too): the lab's
    # start-up refuses it empty instead.
    lab_uses = {m["op"] for m in _VAR.finditer(raw) if m["name"] == "LAB_PASSWORD"}
    assert lab_uses == {":-"}
    for script in (LAB / "init-source").glob("*.sh"):
        assert ': "${LAB_PASSWORD:?' in script.read_text()
    example = (ROOT / "deploy" / "env.example").read_text()
    for name in (*SECRETS, "LAB_PASSWORD"):
        assert re.search(rf"^{name}=$", example, re.M), f"env.example lacks {name}="


def test_start_order_is_gated_by_healthchecks(services):
    for name, service in services.items():
        depends = service.get("depends_on") or {}
        assert isinstance(depends, dict), f"{name}: conditions, not a bare list"
        for target, spec in depends.items():
            assert target in services, f"{name} depends on unknown {target}"
            if name not in LAB_SERVICES:
                assert target not in LAB_SERVICES, f"{name} would pull the lab in"
            condition = spec["condition"]
            if condition == "service_healthy":
                assert "healthcheck" in services[target], f"{target} gates {name}"
            else:
                assert condition == "service_completed_successfully" and target == "migrate"
    for name in ("api", "worker", "beat", "heartbeat", "lab-scenario"):
        depends = services[name]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", name
        assert depends["redis"]["condition"] == "service_healthy", name
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name, service in services.items():
        check = service.get("healthcheck")
        if check:
            assert check["test"][0] in ("CMD", "CMD-SHELL"), name
            assert check.get("interval") and check.get("retries"), name


def test_every_mounted_file_exists_and_named_volumes_are_declared(compose, services):
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source, target = volume.split(":")[:2]
            assert target.startswith("/"), (name, volume)
            if source.startswith("."):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in compose["volumes"], f"{name}: volume {source} not declared"


def test_lab_init_scripts_are_sourced_and_parse():
    scripts = sorted((LAB / "init-source").glob("*")) + sorted((LAB / "init-replica").glob("*"))
    assert [s.name for s in scripts] == ["10-lagscope.sh", "10-replicate.sh"]
    for script in scripts:
        # The mysql image sources a non-executable *.sh (its docker_process_sql is then defined)
        # and would execute an executable one in a shell without it.
        assert not script.stat().st_mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH), script
        subprocess.run(["bash", "-n", str(script)], check=True)
    assert "SOURCE_AUTO_POSITION = 1" in (LAB / "init-replica" / "10-replicate.sh").read_text()


# my.cnf options MariaDB does not know, and why they are here (the rest is checked against
# mariadbd in tests/integration/test_deploy_lab.py).
MYSQL_ONLY = {
    "gtid_mode": "MySQL's GTIDs are off unless enabled; MariaDB always has its own",
    "enforce_gtid_consistency": "required by gtid_mode=ON",
    "binlog_transaction_dependency_tracking": "WRITESET dependencies for LOGICAL_CLOCK (8.0)",
    "log_replica_updates": "MySQL 8.0.26's name; MariaDB has log_slave_updates only",
    "replica_parallel_type": "LOGICAL_CLOCK: MariaDB's counterpart is slave_parallel_mode",
    "replica_parallel_workers": "MariaDB's counterpart is slave_parallel_threads",
    "replica_preserve_commit_order": "MariaDB's optimistic mode always keeps commit order",
}


def cnf_options(path: Path) -> dict[str, str]:
    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None)
    parser.read(path)
    assert parser.sections() == ["mysqld"], path
    return {k: v or "" for k, v in parser["mysqld"].items()}


@pytest.mark.parametrize("name", ["source.cnf", "replica.cnf"])
def test_cnf_options_are_neutral_or_explained(name):
    options = cnf_options(LAB / name)
    assert options["log_bin"] and options["gtid_mode"] == "ON"
    if name == "replica.cnf":
        assert options["replica_parallel_type"] == "LOGICAL_CLOCK"
        assert options["read_only"] == "ON"
    assert set(options) & set(MYSQL_ONLY) <= set(MYSQL_ONLY)


def dockerfile_lines() -> list[str]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def test_the_dockerfile_copies_what_exists_and_serves_the_ui():
    stages = set()
    for line in dockerfile_lines():
        word, _, rest = line.partition(" ")
        if word == "FROM":
            stages.add(rest.split(" AS ")[-1].strip() if " AS " in rest else rest)
        if word == "COPY" and "--from=" not in rest:
            *sources, _destination = rest.split()
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    assert "ui" in stages
    copy_ui = next(line for line in dockerfile_lines() if line.startswith("COPY --from=ui"))
    ui_dist = next(line for line in dockerfile_lines() if "LAGSCOPE_UI_DIST=" in line)
    assert copy_ui.split()[-1].rstrip("/") == ui_dist.split("=", 1)[1].rstrip("/")
    assert "lagscope" in next(line for line in dockerfile_lines() if line.startswith("CMD"))
    # The migrations must reach the image (`lagscope migrate` reads them beside the package).
    assert any(line.startswith("COPY migrations/") for line in dockerfile_lines())
    assert any(line.startswith("COPY alembic.ini") for line in dockerfile_lines())


def test_dockerignore_keeps_what_the_build_needs():
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    for needed in ("backend", "migrations", "alembic.ini", "frontend/src", "frontend/package.json"):
        assert not any(needed == pattern or needed.startswith(pattern + "/") for pattern in ignored)
    assert ".venv" in ignored and "frontend/node_modules" in ignored


def test_interpolation_helper_follows_compose():
    os.environ.pop("X_TEST_UNSET", None)
    assert interpolate("a ${X_TEST_UNSET:-b} $$HOSTNAME") == "a b $HOSTNAME"
    assert interpolate("${X_TEST_UNSET:?no}").startswith("test-x_test_unset-")
