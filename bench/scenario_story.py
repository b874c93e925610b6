"""The demo's tuning story, measured: lag per phase on each replica, and the journal's verdicts.

Runs ``lagscope demo --scenario tuning`` headless for the three phases plus a minute, then reads
the demo's store (kept after it stops): each phase's lag p50 / max / at its end and apply rate
per replica (the same figures the demo prints), and the journal's before → after lag p50 and
verdict per step with its default windows. Several runs print the medians. Figures, not
assertions: the machine is small and shared, and the story depends on its speed (docs/demo.md).

    .venv/bin/python bench/scenario_story.py [--runs 3] [--phase-seconds 60,90,150] [--load-tps N]

Phase B relaxes the flush settings; the journal prints the capacity the replica's measured fsync
cost predicted (analysis/durability.py) and the one measured after it. Phase C adds parallel
workers; the journal prints the capacity its source's binlog predicted
and the one measured after it, when a backlog remained to measure it. With the default phases
phase B drains the backlog first, so C's capacity is not measurable; a short B with the
journal's windows scaled down leaves C starting behind:

    .venv/bin/python bench/scenario_story.py --phase-seconds 60,15,120 --journal-width-s 60 \
        --journal-settle-s 3 --journal-group-s 3 --journal-min-samples 3

Beside them: the side panel's relaxed-flush figure read at phase B's step (the same window and
function as the journal's, so the same figure), the cores each lab server, the demo and all other
work on the box used just before and after phase C's step (from ``/proc``: what the prediction
cannot see), and the busy workers and receive-bound share on each side of that step.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lagscope.analysis.durability import window_cost
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import free_port
from lagscope.demo.scenario import parse_phase_seconds, tuning_plan
from lagscope.demo.scenario_runner import store_figures
from lagscope.history.durability import cost_polls, durability_now
from lagscope.journal import steps as journal
from lagscope.journal.prediction import predicted
from lagscope.journal.steps import JournalSettings
from lagscope.models import Annotation


class CpuSampler:
    """Every second, the CPU time of each process on the box (``/proc``), grouped: each lab
    server (``mariadbd`` by its directory), every other process whose command line names a
    lagscope or redis process (the demo: Lagscope, its write load and the far replica's proxy),
    and the rest (other work on the shared box); and the box's busy time. Linux only."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, dict[int, tuple[str, float]], float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")
        # Labs already running (other work's) count as "other": only the demo's lab is new.
        self._other_labs = {_lab_dir(_argv(p)) for p in _processes()} - {None}
        self.root_pid = -1  # the demo's process: it and its children are the demo

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.samples.append((time.time(), self._by_group(), self._box_busy()))

    def _box_busy(self) -> float:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
        ticks = [int(f) for f in fields]
        return (sum(ticks) - ticks[3] - ticks[4]) / self._tick  # all but idle and iowait

    def _by_group(self) -> dict[int, tuple[str, float]]:
        seconds: dict[int, float] = {}
        parent: dict[int, int] = {}
        names: dict[int, list[str]] = {}
        for entry in _processes():
            try:
                argv = _argv(entry)
                ticks = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            pid = int(entry.name)
            parent[pid], names[pid] = int(ticks[1]), argv
            seconds[pid] = (int(ticks[11]) + int(ticks[12])) / self._tick  # utime + stime
        return {pid: (self._group(pid, names[pid], parent), t) for pid, t in seconds.items()}

    def _group(self, pid: int, argv: list[str], parent: dict[int, int]) -> str:
        lab = _lab_dir(argv)
        if lab is not None:
            return "other" if lab in self._other_labs else f"mariadbd {Path(lab).name}"
        while pid > 1 and pid != self.root_pid:
            pid = parent.get(pid, 0)
        return "demo: lagscope + load" if pid == self.root_pid else "other"

    def cores(self, start: float, end: float) -> dict[str, float]:
        """Cores each group used on average over [start, end] (CPU seconds per second), from
        each process's time between consecutive samples (one that ended meanwhile is lost)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            return {}
        used: dict[str, float] = defaultdict(float)
        for (_, before, _), (_, after, _) in itertools.pairwise(inside):
            for pid, (group, spent) in after.items():
                if pid in before:
                    used[group] += spent - before[pid][1]
        span = inside[-1][0] - inside[0][0]
        out = {k: v / span for k, v in sorted(used.items())}
        out["box busy"] = (inside[-1][2] - inside[0][2]) / span
        return {k: v for k, v in out.items() if v >= 0.005}


def _processes() -> list[Path]:
    return [p for p in Path("/proc").iterdir() if p.name.isdigit()]


def _argv(proc: Path) -> list[str]:
    try:
        return [a.decode(errors="replace") for a in (proc / "cmdline").read_bytes().split(b"\0")]
    except OSError:
        return []


def _lab_dir(argv: list[str]) -> str | None:
    """A lab server's directory (``…/lagscope-lab-x/replica1``), None for other processes."""
    if not argv or not argv[0].endswith(("mariadbd", "mysqld")):
        return None
    datadir = next((a.split("=", 1)[1] for a in argv if a.startswith("--datadir=")), None)
    return None if datadir is None else str(Path(datadir).parent)


def one_run(
    phase_arg: str, load_tps: str | None, tail_s: float, windows: JournalSettings
) -> dict[str, float]:
    phases = tuning_plan(parse_phase_seconds(phase_arg))
    workdir = Path(tempfile.mkdtemp(prefix="lagscope-story-"))
    argv = [sys.executable, "-m", "lagscope", "demo", "--port", str(free_port())]
    argv += ["--dir", str(workdir), "--phase-seconds", phase_arg]
    argv += ["--duration", str(sum(p.seconds for p in phases) + tail_s)]
    if load_tps:
        argv += ["--load-tps", load_tps]
    began = time.monotonic()
    with CpuSampler() as cpu, subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as demo:
        cpu.root_pid = demo.pid
        out, _ = demo.communicate(timeout=3600)
    print(f"  demo ran {time.monotonic() - began:.0f} s (exit {demo.returncode})")
    for line in out.splitlines():
        if line.startswith("scenario: phase") and " s — " in line:
            print("  " + line)
    sessions = make_session_factory(make_engine(f"sqlite:///{workdir / 'lagscope-demo.db'}"))
    figures: dict[str, float] = {}
    with sessions() as session:
        notes = session.query(Annotation).order_by(Annotation.starts_at).all()
        at = {n.text[6]: n.starts_at for n in notes if n.text.startswith("phase ")}
        cluster_id = notes[0].cluster_id
        ends = {
            "A": at.get("B"),
            "B": at.get("C"),
            "C": at["C"] + timedelta(seconds=phases[2].seconds),
        }
        if "C" in at:  # the cores each process used around the parallel step
            step = at["C"].timestamp()
            for label, lo, hi in (("before C", step - 12, step), ("after C", step + 5, step + 35)):
                used = cpu.cores(lo, hi)
                print(f"  cpu {label}: " + ", ".join(f"{k} {v:.2f}" for k, v in used.items()))
                for name, value in used.items():
                    figures[f"cpu {label} {name} cores"] = value
        read = store_figures(sessions, cluster_id)
        for name in ("A", "B", "C"):
            if name in at and ends[name] is not None:
                for replica, f in read(at[name], ends[name]).items():
                    figures[f"{name} {replica} lag p50"] = f.lag_p50 or 0.0
                    figures[f"{name} {replica} lag at end"] = f.lag_last or 0.0
                    figures[f"{name} {replica} apply/s"] = f.apply_rate or 0.0
                    figures[f"{name} {replica} source/s"] = f.source_rate or 0.0
        found = predicted(
            session,
            journal.journal(
                session,
                cluster_id,
                min(at.values()) - timedelta(seconds=1),
                datetime.now(UTC),
                windows,
            ),
            os.cpu_count(),  # the lab's replicas run here: this box's cores cap the prediction
        )
        for entry in found.entries:
            label = next(
                (a.text[:7] for a in entry.step.annotations if a.text.startswith("phase ")), "?"
            )
            for item in entry.impacts:
                result = item.impact
                print(
                    f"  journal {label} {item.instance.name}: lag p50 "
                    f"{result.before.lag_p50} -> {result.after.lag_p50} s, {result.verdict.value}"
                )
                guess = item.prediction
                if guess is not None:  # phase C: the capacity its binlog window predicted
                    print(
                        f"  prediction {label} {item.instance.name}: {guess.workers_before} -> "
                        f"{guess.workers_after} workers ({guess.mode}), x{guess.factor:.2f} "
                        f"(stream x{guess.stream_allows:.2f}, cores {guess.cores}): predicted "
                        f"{guess.predicted} trx/s, measured {guess.measured} trx/s, "
                        f"error {guess.error}"
                    )
                    if guess.error is not None:
                        figures[f"C {item.instance.name} prediction error"] = guess.error * 100
                    # What limited the applier on each side: its busy workers, the share of
                    # polls whose backlog was mostly not yet received.
                    for side, span in (("before", entry.before), ("after", entry.after)):
                        polls = cost_polls(session, item.instance.id, item.channel.id, *span)
                        cost = window_cost(polls)
                        print(
                            f"  {side} {label} {item.instance.name}: busy workers {cost.busy}, "
                            f"relay-log waiting {cost.relay_waiting}, receive-bound share "
                            f"{cost.receive_bound}, capacity {cost.rate}"
                        )
                    if guess.predicted is not None:
                        figures[f"C {item.instance.name} predicted capacity"] = guess.predicted
                flush = item.durability
                if flush is not None:  # phase B: the capacity its fsync cost predicted
                    parts = ", ".join(f"{r.what} {r.s_per_trx * 1e3:.3f} ms" for r in flush.removed)
                    per_trx = flush.applier_s_per_trx
                    print(
                        f"  durability {label} {item.instance.name}: applier "
                        f"{None if per_trx is None else round(per_trx * 1e3, 3)} ms/trx, removes "
                        f"{parts or 'nothing priced'}; x{flush.factor} (capped {flush.capped}): "
                        f"predicted {flush.predicted} trx/s, measured {flush.measured} trx/s, "
                        f"error {flush.error}; unknown {list(flush.unknown)}; note {flush.note}"
                    )
                    if flush.error is not None:
                        figures[f"B {item.instance.name} prediction error"] = flush.error * 100
                    # The side panel read at the step's last strict poll: the same figure.
                    panel = {
                        d.channel_id: d.prediction.factor
                        for d in durability_now(
                            session,
                            cluster_id,
                            entry.step.changed_after,
                            windows.width_s,
                            windows.settle_s,
                        )
                    }.get(item.channel.id)
                    print(
                        f"  side panel at the step {label} {item.instance.name}: x{panel} "
                        f"(journal x{flush.factor})"
                    )
                    if panel is not None and flush.factor is not None:
                        figures[f"B {item.instance.name} panel ÷ journal"] = panel / flush.factor
                    if flush.predicted is not None:
                        figures[f"B {item.instance.name} predicted capacity"] = flush.predicted
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--phase-seconds", default="60,90,150")
    parser.add_argument("--load-tps", default=None)
    parser.add_argument("--tail-s", type=float, default=30.0)
    # The journal's windows (its defaults: 600 s, 30 s settle, steps 10 s apart merged). A short
    # phase B, so that phase C starts behind and its capacity can be measured, wants them
    # scaled down: e.g. --phase-seconds 60,15,120 --journal-width-s 60 --journal-settle-s 3
    # --journal-group-s 3 --journal-min-samples 3.
    parser.add_argument("--journal-width-s", type=float, default=600.0)
    parser.add_argument("--journal-settle-s", type=float, default=30.0)
    parser.add_argument("--journal-group-s", type=float, default=10.0)
    parser.add_argument("--journal-min-samples", type=int, default=10)
    args = parser.parse_args()
    runs: dict[str, list[float]] = defaultdict(list)
    for run in range(1, args.runs + 1):
        print(f"run {run}:")
        windows = JournalSettings(
            args.journal_width_s,
            args.journal_settle_s,
            args.journal_min_samples,
            args.journal_group_s,
        )
        for key, value in one_run(args.phase_seconds, args.load_tps, args.tail_s, windows).items():
            runs[key].append(value)
    print(f"medians over {args.runs} runs:")
    for key, values in runs.items():
        print(f"  {key}: {statistics.median(values):.1f}  (runs: {[round(v, 1) for v in values]})")


if __name__ == "__main__":
    main()
