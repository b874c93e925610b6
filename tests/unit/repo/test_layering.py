"""No import runs back up: the packages of ``lagscope`` form floors, and each imports only its
own floor and those below.

Read from the source with ``ast`` (every ``import``, at module level or inside a function), so a
lazy import cannot slip a back edge past the check. The floors, bottom up:

- ``errors`` and ``metrics_catalog`` (data only, importing nothing);
  ``collectors`` (SQL to monitored servers); ``config``; ``models``; ``analysis`` and
  the pure alert core (``alerts.state``, ``payloads``, ``delivery_policy``, ``signing``): no I/O
  beyond the collectors, no context;
- the contexts: ``security`` < ``inventory`` < ``ingest`` | ``history`` (siblings: writing the
  store and reading it back never import each other) < ``journal`` < ``alerts``;
- the edges: ``api`` and ``tasks`` (over the contexts, never each other), ``engine`` (the owner
  engine's poll loop, which queues deliveries through ``tasks``), then the tools (``cli``,
  ``demo``, ``lab``) that may start anything.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "backend" / "lagscope"
ALERT_CORE = frozenset({"state", "payloads", "delivery_policy", "signing"})

BOTTOM = frozenset({"lagscope", "errors", "metrics_catalog"})
FLOOR = BOTTOM | {"collectors", "config", "models", "analysis", "alerts.core"}
ALLOWED: Mapping[str, frozenset[str]] = {
    "lagscope": frozenset(),
    "errors": frozenset(),
    "metrics_catalog": frozenset(),
    "collectors": BOTTOM,
    "config": BOTTOM | {"collectors"},
    "models": BOTTOM,
    "analysis": BOTTOM | {"collectors"},
    "alerts.core": BOTTOM | {"collectors", "analysis", "config"},
    "db": BOTTOM | {"config", "models"},
    "store_setup": BOTTOM | {"config", "db", "models"},
    "security": FLOOR | {"db"},
    "inventory": FLOOR | {"security"},
    "ingest": FLOOR | {"security", "inventory"},
    "history": FLOOR | {"security", "inventory"},
    "journal": FLOOR | {"security", "inventory", "history"},
    "alerts": FLOOR | {"security", "inventory", "history", "journal"},
    # Lagscope's own health: its processes' reports, and the watchdog they all run.
    "health": FLOOR | {"db", "security", "inventory", "history", "journal", "alerts"},
    "api": FLOOR
    | {"db", "security", "inventory", "history", "journal", "alerts", "health", "series_store"},
    "tasks": FLOOR
    | {"db", "security", "inventory", "ingest", "history", "journal", "alerts", "health"},
    "lab": BOTTOM | {"collectors", "config"},
    # Each poll's figures pushed out (remote write), from a batch's figures (alerts.tick_figures).
    "remote_write": FLOOR | {"security", "inventory", "history", "journal", "alerts"},
    # The raw-series store past one box: written as remote write is, read through history's seam.
    "series_store": FLOOR
    | {"security", "inventory", "history", "journal", "alerts", "remote_write"},
    # The owner engine's poll loop: over the contexts, and queueing deliveries as tasks do.
    "engine": FLOOR
    | {
        "db",
        "security",
        "inventory",
        "ingest",
        "history",
        "journal",
        "alerts",
        "health",
        "tasks",
        "remote_write",
        "series_store",
    },
}
TOOLS = frozenset({"cli", "__main__", "demo"})  # start anything: processes, the API, the lab


def floor_of(module: str) -> str:
    """``lagscope.history.series`` → ``history``; the pure alert modules are their own floor."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__version__":
        return "lagscope"
    if parts[1] == "alerts" and len(parts) > 2 and parts[2] in ALERT_CORE:
        return "alerts.core"
    return parts[1]


def module_name(path: Path) -> str:
    name = ".".join(("lagscope", *path.relative_to(PACKAGE).with_suffix("").parts))
    return name.removesuffix(".__init__")


def imports_of(source: str, module: str) -> set[str]:
    """Every ``lagscope`` module (or name in one) ``source`` imports, relative ones resolved."""
    found: set[str] = set()
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            found |= {f"{base}.{a.name}" for a in node.names}
    return {name for name in found if name == "lagscope" or name.startswith("lagscope.")}


def back_edges(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """The imports that break the floors, as ``importer -> imported`` lines."""
    wrong = []
    for module, targets in sorted(graph.items()):
        here = floor_of(module)
        if here in TOOLS:
            continue
        allowed = ALLOWED.get(here)
        for target in sorted(targets):
            there = floor_of(target)
            if there == here:
                continue
            if allowed is None or there not in allowed:
                wrong.append(f"{module} ({here}) -> {target} ({there})")
    return wrong


def package_graph() -> dict[str, set[str]]:
    return {
        module_name(path): imports_of(path.read_text(), module_name(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_no_import_runs_back_up() -> None:
    wrong = back_edges(package_graph())
    assert not wrong, "imports against the floors:\n" + "\n".join(wrong)


def test_every_package_has_a_floor() -> None:
    floors = {floor_of(module) for module in package_graph()}
    assert floors - set(ALLOWED) - TOOLS == set(), "a new package needs its row in ALLOWED"


def test_services_is_gone() -> None:
    assert not (PACKAGE / "services").exists()


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("lagscope.analysis.impact", "lagscope.history.series.query_series"),
        ("lagscope.collectors.poller", "lagscope.ingest.reader.PollResult"),
        ("lagscope.alerts.state", "lagscope.alerts.readings.subjects"),
        ("lagscope.inventory.server_logins", "lagscope.ingest.reader.PollResult"),
        ("lagscope.history.workers", "lagscope.journal.steps.require_window"),
        ("lagscope.ingest.recording", "lagscope.history.workers.record_workers"),
        ("lagscope.history.status", "lagscope.api.schemas.status.ClusterStatus"),
        ("lagscope.journal.steps", "lagscope.tasks.jobs.app"),
        ("lagscope.api.routers.status", "lagscope.tasks.jobs.poll_cluster_task"),
        ("lagscope.security.users", "lagscope.inventory.instances.get_cluster"),
    ],
)
def test_a_back_edge_is_caught(importer: str, imported: str) -> None:
    assert back_edges({importer: {imported}}) == [
        f"{importer} ({floor_of(importer)}) -> {imported} ({floor_of(imported)})"
    ]


def test_the_reading_sees_lazy_and_relative_imports() -> None:
    source = (
        "from lagscope.history import series\n"
        "def f():\n"
        "    from lagscope.tasks.jobs import app\n"
        "    import lagscope.api.app\n"
        "from .steps import Journal\n"
    )
    assert imports_of(source, "lagscope.journal.compare") == {
        "lagscope.history.series",
        "lagscope.tasks.jobs.app",
        "lagscope.api.app",
        "lagscope.journal.steps.Journal",
    }
