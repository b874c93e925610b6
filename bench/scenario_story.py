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
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import free_port
from lagscope.demo.scenario import parse_phase_seconds, tuning_plan
from lagscope.demo.scenario_runner import store_figures
from lagscope.journal import steps as journal
from lagscope.journal.prediction import predicted
from lagscope.journal.steps import JournalSettings
from lagscope.models import Annotation


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
    done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    print(f"  demo ran {time.monotonic() - began:.0f} s (exit {done.returncode})")
    for line in done.stdout.splitlines():
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
