"""The demo's scenarios as data: which settings each phase puts on the replicas, and for how long.

``tuning`` tells the seed story in three phases under one constant write load:

- **A** strict durability and single-threaded apply: every replica fsyncs its relay log, its
  relay-log and master info, its binlog and its redo log per transaction, so it applies a few
  hundred transactions a second while the source group-commits thousands: lag builds by nearly a
  second per second, on the near and the far replica alike (the network is not the bottleneck);
- **B** relaxed flush: those five settings relaxed (all dynamic on MariaDB 10.11, taking effect
  on the running replication threads; no restart);
- **C** parallel apply: ``slave_parallel_threads`` and ``slave_parallel_mode``, which MariaDB
  changes only while the replica's SQL thread is stopped, so the phase stops and restarts it (the
  IO thread keeps receiving). MySQL's equivalent is ``replica_parallel_workers`` with
  ``replica_parallel_type=LOGICAL_CLOCK`` (changed with the applier stopped too).

The phases name MariaDB's variables; :func:`replica_statements` translates them for MySQL 8.0
(``sync_source_info``; ``replica_parallel_workers`` = 1 for serial, as 0 is deprecated since
8.0.30; ``replica_parallel_type = LOGICAL_CLOCK``), which the docker-compose lab runs.

``incidents`` (the demo's lab only) makes one cause of lag happen after another under a light
load, each with a note on the timeline saying what was done and what Lagscope should name: a
replica session holding row locks the applier needs, one holding a table's metadata lock, one
large transaction, a long ALTER, a bulk update of a table without a primary key, the far link
squeezed. Each is held long enough to be seen (~40-75 s), undone cleanly (the replicas catch up),
then left quiet so its episode closes before the next begins. They are planned in
:mod:`lagscope.demo.incident_plan` and made by :mod:`lagscope.lab.incidents`; the demo's
``tuning`` story opens with a short one (a blocked applier, at a light load, so it drains before
phase A). Each phase's figures are :mod:`lagscope.demo.scenario_figures`.

``steady`` is the plain load with the lab's defaults. Everything here is pure: the runner
(:mod:`lagscope.demo.scenario_runner`) executes :func:`replica_statements`, plays the incidents
and writes the notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from lagscope.errors import InvalidInput

Flavor = Literal["mariadb", "mysql"]

SCENARIOS = ("tuning", "steady")  # on any servers (``lagscope scenario``)
DEMO_SCENARIOS = ("tuning", "incidents", "steady")  # on the demo's own lab
PARALLEL_MODES = ("none", "minimal", "conservative", "optimistic", "aggressive")
NOTE_TAGS = ("scenario", "tuning")
NOTE_AUTHOR = "scenario"
# Long enough for the journal's defaults (settle 30 s + 10 samples at 1 Hz, a parameter read
# every few seconds) to judge every phase; A builds ~45-55 s of lag at the default load on a
# 2-core box (docs/demo.md: measured figures). 60 + 90 + 150 s: the story ends in 5 minutes.
DEFAULT_PHASE_SECONDS = (60.0, 90.0, 150.0)
MIN_PHASE_S = 5.0
MAX_PHASE_S = 3600.0

STRICT_FLUSH: tuple[tuple[str, int], ...] = (
    ("innodb_flush_log_at_trx_commit", 1),
    ("sync_binlog", 1),
    ("sync_relay_log", 1),
    ("sync_relay_log_info", 1),
    ("sync_master_info", 1),
)
# 0 = the server never fsyncs these files itself (the OS writes them back); a crash may lose
# up to a second of redo log and the relay-log positions, which a GTID replica re-fetches.
RELAXED_FLUSH: tuple[tuple[str, int], ...] = (
    ("innodb_flush_log_at_trx_commit", 2),
    ("sync_binlog", 0),
    ("sync_relay_log", 0),
    ("sync_relay_log_info", 0),
    ("sync_master_info", 0),
)
# The only names SET GLOBAL is ever built with: the plan is data, but a typo must not become SQL.
DYNAMIC_SETTINGS = frozenset(name for name, _ in STRICT_FLUSH)
MYSQL_NAMES = {"sync_master_info": "sync_source_info"}  # renamed in 8.0.26
# What a replica reports its applier as, read before a phase (the applier restarts on change).
CURRENT_APPLIER_SQL = {
    "mariadb": "SELECT @@global.slave_parallel_threads, @@global.slave_parallel_mode",
    "mysql": "SELECT @@global.replica_parallel_workers, @@global.replica_parallel_type",
}


@dataclass(frozen=True, slots=True)
class Parallel:
    """The applier: ``threads`` = 0 applies serially in the SQL thread."""

    threads: int
    mode: str = "optimistic"


@dataclass(frozen=True, slots=True)
class Phase:
    name: str
    title: str
    seconds: float
    settings: tuple[tuple[str, int], ...] = ()
    parallel: Parallel | None = None

    @property
    def note(self) -> str:
        """The annotation the scenario writes when the phase begins (MariaDB's names)."""
        return self.note_for("mariadb")

    def note_for(self, flavor: Flavor) -> str:
        changed = [f"{setting_name(name, flavor)}={value}" for name, value in self.settings]
        if self.parallel is not None:
            changed += [f"{name}={value}" for name, value in applier(self.parallel, flavor)]
        text = f"phase {self.name}: {self.title} ({', '.join(changed)}"
        if flavor == "mariadb" and self.parallel is not None and self.parallel.threads > 0:
            # The note is what the UI's journal shows: name the counterpart for MySQL readers.
            mysql = ", ".join(f"{n}={v}" for n, v in applier(self.parallel, "mysql"))
            text += f"; on MySQL: {mysql}"
        return text + ")"


def setting_name(name: str, flavor: Flavor) -> str:
    return MYSQL_NAMES.get(name, name) if flavor == "mysql" else name


def applier(parallel: Parallel, flavor: Flavor) -> tuple[tuple[str, str], tuple[str, str]]:
    """The two variables that choose the applier, as this flavor names and spells them."""
    if parallel.mode not in PARALLEL_MODES or not 0 <= parallel.threads <= 256:
        raise InvalidInput(f"no such parallel applier: {parallel}")
    if flavor == "mysql":
        # 0 workers is deprecated since 8.0.30 (1 = single-threaded); LOGICAL_CLOCK is MySQL's
        # counterpart of MariaDB's optimistic mode: commit-order dependencies from the source.
        return (
            ("replica_parallel_workers", str(max(1, parallel.threads))),
            ("replica_parallel_type", "LOGICAL_CLOCK"),
        )
    return (
        ("slave_parallel_threads", str(parallel.threads)),
        ("slave_parallel_mode", parallel.mode),
    )


def tuning_plan(seconds: Sequence[float] = DEFAULT_PHASE_SECONDS) -> tuple[Phase, ...]:
    a, b, c = check_phase_seconds(seconds)
    return (
        Phase(
            "A",
            "strict durability, single-threaded apply on replicas",
            a,
            STRICT_FLUSH,
            Parallel(0),
        ),
        Phase("B", "relax flush on replicas", b, RELAXED_FLUSH),
        Phase("C", "parallel apply on replicas", c, parallel=Parallel(4, "optimistic")),
    )


def plan_for(scenario: str, seconds: Sequence[float] = DEFAULT_PHASE_SECONDS) -> tuple[Phase, ...]:
    if scenario not in SCENARIOS:
        raise InvalidInput(f"scenario must be one of {SCENARIOS}, not {scenario!r}")
    return tuning_plan(seconds) if scenario == "tuning" else ()


def check_phase_seconds(seconds: Sequence[float]) -> tuple[float, float, float]:
    if len(seconds) != 3:
        raise InvalidInput(f"three phase lengths are needed (A, B, C), not {len(seconds)}")
    for value in seconds:
        if not MIN_PHASE_S <= value <= MAX_PHASE_S:
            raise InvalidInput(f"a phase lasts {MIN_PHASE_S:g} to {MAX_PHASE_S:g} s, not {value}")
    return float(seconds[0]), float(seconds[1]), float(seconds[2])


def parse_phase_seconds(text: str) -> tuple[float, float, float]:
    """``"90"`` (every phase) or ``"60,90,150"`` (A, B, C)."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise InvalidInput(f"phase seconds: numbers separated by commas, not {text!r}") from None
    return check_phase_seconds(values * 3 if len(values) == 1 else values)


def replica_statements(
    phase: Phase, current: Mapping[str, str], flavor: Flavor = "mariadb"
) -> list[str]:
    """What one replica runs to enter ``phase``, given its current applier variables
    (``current``, by name, as :data:`CURRENT_APPLIER_SQL` reads them): the applier is
    restarted only if they change."""
    statements = []
    for name, value in phase.settings:
        if name not in DYNAMIC_SETTINGS:
            raise InvalidInput(f"{name} is not a setting the scenario changes")
        statements.append(f"SET GLOBAL {setting_name(name, flavor)} = {int(value)}")
    if phase.parallel is not None:
        (workers, count), (kind, mode) = applier(phase.parallel, flavor)
        serial = count == ("1" if flavor == "mysql" else "0")
        same = current.get(workers) == count and (
            serial or current.get(kind, "").upper() == mode.upper()
        )
        if not same:
            # Both flavors refuse these while the applier runs (MariaDB: error 1198); the
            # receiver may go on, so the network side of the story is not disturbed.
            stop, start = (
                ("STOP REPLICA", "START REPLICA")
                if flavor == "mysql"
                else (
                    "STOP SLAVE",
                    "START SLAVE",
                )
            )
            statements += [
                f"{stop} SQL_THREAD",
                f"SET GLOBAL {workers} = {int(count)}",
                f"SET GLOBAL {kind} = '{mode}'",
                f"{start} SQL_THREAD",
            ]
    return statements
