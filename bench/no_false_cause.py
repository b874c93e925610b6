"""No false cause: what the cause pipeline names when nothing is wrong, and in the tuning story.

Runs ``lagscope demo`` headless (the lab, its write load, the real pipeline: Celery worker and
beat polling every second, diagnosis and the episode tracker writing the store) and, while it
runs, reads every channel's ``current_causes`` from the demo's store once a second, counting
each poll once (by the channel's ``last_sample_at``). At the end it reads the episodes and their
cause segments the store kept. Two runs:

- ``steady``: the demo's ``steady`` scenario (a load the lab's default replicas follow, no
  incident, no parameter change) for ``--minutes``; ``--load-tps`` above what they follow (1,000
  trx/s on a busy 2-core box: serial apply, innodb_flush_log_at_trx_commit=1) is no steady run,
  and the bench says so. Every episode and every cause is false here,
  a clock skew excepted if the clocks really differ (the lab's servers share the box's clock).
- ``tuning``: the demo's tuning story (phases A, B, C of :mod:`lagscope.demo.scenario`); polls
  are counted per phase from the phase notes, against which causes each phase's settings make
  true (:data:`TRUE_CAUSES`): the rest are marked false.

Figures, not assertions (the box is small and shared): the load average is printed with them.

    .venv/bin/python bench/no_false_cause.py [--run steady|tuning|both] [--minutes 10]
        [--phase-seconds 60,90,150] [--load-tps N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from lagscope.analysis.causes.episodes import EPISODE_LAG_S
from lagscope.analysis.causes.model import Cause
from lagscope.db import make_engine, make_session_factory
from lagscope.demo.processes import free_port
from lagscope.demo.scenario import parse_phase_seconds, tuning_plan
from lagscope.models import Annotation, Channel, Episode, EpisodeCause, Instance

# A cause that is true by construction in a phase of the tuning story (demo/scenario.py):
# A  strict durability, serial apply: every replica fsyncs each relay-log event and its master
#    info (sync_relay_log=1, sync_master_info=1) and each applied commit
#    (innodb_flush_log_at_trx_commit=1, sync_binlog=1) with slave_parallel_threads=0, while six
#    writers make the source group-commit: relay-log durability, durable apply and serial apply.
#    Near and far lag alike: not the network; the load is constant: not a burst.
# B  the five flush settings relaxed, still one applier thread: the backlog of A drains at serial
#    speed, so "one thread, parallelism available" is true; the durability causes end with the
#    settings (within the parameter reading's 2 s in the demo).
# C  the SQL thread is stopped and restarted to set 4 optimistic workers (a stop of a poll or two
#    is true); parallel workers waiting on each other is possible (MariaDB optimistic mode keeps
#    commit order): judged from its evidence, not by construction.
# Before A and after C: nothing holds the replicas (the lab's defaults at the first phase, or
# still C's settings). Unexplained is no false cause but no naming either: counted apart.
TRUE_CAUSES: Mapping[str, frozenset[str]] = {
    "warm-up": frozenset(),
    "A": frozenset({"relay_log_durability", "durable_apply", "serial_apply"}),
    "B": frozenset({"serial_apply"}),
    "C": frozenset({"stopped"}),
    "tail": frozenset(),
    "steady": frozenset(),
}
MAYBE_CAUSES: Mapping[str, frozenset[str]] = {
    "B": frozenset({"relay_log_durability", "durable_apply"}),  # the 2 s the params take
    "C": frozenset({"ordering", "serial_apply"}),  # serial until the restarted applier polls
}
NOT_A_CAUSE = frozenset({"unexplained", "clock_skew"})  # judged apart (see the docstring)
WARM_UP_S = 30.0


@dataclass
class Tally:
    polls: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # phase, replica, cause
    polls_seen: Counter[tuple[str, str]] = field(default_factory=Counter)  # phase, replica
    behind_polls: Counter[tuple[str, str]] = field(default_factory=Counter)
    loads: list[float] = field(default_factory=list)
    examples: dict[tuple[str, str], str] = field(default_factory=dict)  # phase, cause → sentence
    peak_lag_s: float = 0.0  # the highest episode peak the store kept


def sample_store(
    store: Path, stop: threading.Event, tally: Tally, phase_of: PhaseClock | None
) -> None:
    """Each second: every channel's newest poll's causes, each poll counted once."""
    seen: dict[int, datetime] = {}
    engine = None
    first_at: float | None = None
    while not stop.wait(1.0):
        tally.loads.append(os.getloadavg()[0])
        if not store.exists():
            continue
        engine = engine or make_engine(f"sqlite:///{store}")
        try:
            with make_session_factory(engine)() as session:
                rows = session.execute(
                    select(Channel, Instance.name).join(
                        Instance, Channel.instance_id == Instance.id
                    )
                ).all()
                if phase_of is not None:
                    phase_of.refresh(session)
        except OperationalError:
            continue  # the store is being created, or locked by a writer for a moment
        for channel, replica in rows:
            at = channel.last_sample_at
            if at is None or seen.get(channel.id) == at:
                continue
            seen[channel.id] = at
            epoch = at.timestamp()
            first_at = first_at or epoch
            if phase_of is not None:
                phase = phase_of.phase(epoch)
            else:
                phase = "warm-up" if epoch - first_at < WARM_UP_S else "steady"
            tally.polls_seen[(phase, replica)] += 1
            causes = channel.current_causes or []
            if causes:
                tally.behind_polls[(phase, replica)] += 1
            for cause in causes:
                label = str(cause.get("cause"))
                tally.polls[(phase, replica, label)] += 1
                tally.examples.setdefault((phase, label), str(cause.get("sentence", ""))[:300])
    if engine is not None:
        engine.dispose()


class PhaseClock:
    """Which tuning phase a poll belongs to, from the phase notes the scenario writes."""

    def __init__(self, seconds: tuple[float, float, float]) -> None:
        self.seconds = seconds
        self.starts: dict[str, float] = {}

    def refresh(self, session: object) -> None:
        if len(self.starts) == 3:
            return
        notes = session.execute(select(Annotation.text, Annotation.starts_at)).all()  # type: ignore[attr-defined]
        for text, starts_at in notes:
            if text.startswith("phase ") and text[6] in "ABC":
                self.starts.setdefault(text[6], starts_at.timestamp())

    def phase(self, at: float) -> str:
        current = "warm-up"
        for name in "ABC":
            if name in self.starts and at >= self.starts[name]:
                current = name
        if current == "C" and at >= self.starts["C"] + self.seconds[2]:
            return "tail"
        return current


def run_demo(scenario: str, duration_s: float, phase_arg: str, load_tps: str | None) -> Tally:
    workdir = Path(tempfile.mkdtemp(prefix=f"lagscope-nofalse-{scenario}-"))
    store = workdir / "lagscope-demo.db"
    argv = [sys.executable, "-m", "lagscope", "demo", "--port", str(free_port())]
    argv += ["--dir", str(workdir), "--scenario", scenario, "--duration", str(duration_s)]
    if scenario == "tuning":
        argv += ["--phase-seconds", phase_arg]
    if load_tps:
        argv += ["--load-tps", load_tps]
    print(f"$ {' '.join(argv)}", flush=True)
    tally = Tally()
    stop = threading.Event()
    clock = PhaseClock(parse_phase_seconds(phase_arg)) if scenario == "tuning" else None
    sampler = threading.Thread(target=sample_store, args=(store, stop, tally, clock), daemon=True)
    began = time.monotonic()
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as demo:
        sampler.start()
        assert demo.stdout is not None
        output = []
        for line in demo.stdout:
            output.append(line.rstrip())
            if line.startswith(("scenario:", "Lagscope demo", "lagscope demo")):
                print("  " + line.rstrip(), flush=True)
        demo.wait()
    if demo.returncode != 0:
        print("\n".join(output[-20:]))
    stop.set()
    sampler.join(timeout=10)
    print(f"  demo ran {time.monotonic() - began:.0f} s (exit {demo.returncode}); store {store}")
    tally.peak_lag_s = report_segments(store, clock)
    return tally


def report_segments(store: Path, clock: PhaseClock | None) -> float:
    """The episodes the store kept and their cause segments, per replica and cause."""
    sessions = make_session_factory(make_engine(f"sqlite:///{store}"))
    with sessions() as session:
        names = dict(session.execute(select(Channel.id, Instance.name).join(Instance)).all())
        episodes = session.scalars(select(Episode).order_by(Episode.started_at)).all()
        print(f"  episodes opened: {len(episodes)}")
        for ep in episodes:
            main = Cause(ep.main_cause).label if ep.main_cause else "-"
            where = f" (phase {clock.phase(ep.started_at.timestamp())})" if clock else ""
            ended = ep.ended_at.isoformat(timespec="seconds") if ep.ended_at else "ongoing"
            print(
                f"    {names.get(ep.channel_id)}: {ep.started_at:%H:%M:%S}{where} → {ended}, "
                f"peak {ep.peak_lag_s} s, main cause {main}, ended {ep.end_reason}"
            )
        segs = session.execute(
            select(EpisodeCause, Episode.channel_id).join(
                Episode, EpisodeCause.episode_id == Episode.id
            )
        ).all()
        count: Counter[tuple[str, str]] = Counter()
        held: defaultdict[tuple[str, str], float] = defaultdict(float)
        for seg, channel_id in segs:
            key = (str(names.get(channel_id)), Cause(seg.cause).label)
            count[key] += 1
            if seg.ended_at is not None:
                held[key] += (seg.ended_at - seg.started_at).total_seconds()
        print("  cause segments stored (replica, cause: segments, seconds held):")
        for key in sorted(count):
            print(f"    {key[0]:9} {key[1]:22} {count[key]:4}  {held[key]:7.0f} s")
        if not count:
            print("    none")
    return max((ep.peak_lag_s or 0.0 for ep in episodes), default=0.0)


def print_table(title: str, tally: Tally, phases: list[str]) -> None:
    replicas = sorted({r for _, r in tally.polls_seen})
    causes = sorted({c for _, _, c in tally.polls})
    print(
        f"\n{title}: polls that named each cause (false ones marked *, unjudged ?); polls: "
        "the polls sampled (each channel's newest, read once a second), named: those that "
        "named any cause"
    )
    header = f"  {'phase':8} {'replica':9} {'polls':>5} {'named':>5}  " + "  ".join(causes)
    print(header)
    false_total: Counter[str] = Counter()
    for phase in phases:
        for replica in replicas:
            polls = tally.polls_seen[(phase, replica)]
            if not polls:
                continue
            cells = []
            for cause in causes:
                n = tally.polls[(phase, replica, cause)]
                mark = ""
                if n and cause not in TRUE_CAUSES.get(phase, frozenset()):
                    if cause in NOT_A_CAUSE or cause in MAYBE_CAUSES.get(phase, frozenset()):
                        mark = "?"
                    else:
                        mark = "*"
                        false_total[cause] += n
                cells.append(f"{n}{mark}".rjust(len(cause)))
            named = tally.behind_polls[(phase, replica)]
            print(f"  {phase:8} {replica:9} {polls:5} {named:5}  " + "  ".join(cells))
    print(f"  false causes named (polls): {dict(false_total) or 'none'}")
    for (phase, cause), sentence in sorted(tally.examples.items()):
        print(f"    e.g. {phase} {cause}: {sentence}")
    if tally.loads:
        loads = sorted(tally.loads)
        print(
            f"  load average (1 min) during the run: min {loads[0]:.1f}, "
            f"median {loads[len(loads) // 2]:.1f}, max {loads[-1]:.1f} (2 cores)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", choices=("steady", "tuning", "both"), default="both")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--phase-seconds", default="60,90,150")
    parser.add_argument("--load-tps", default=None)
    parser.add_argument("--tail-s", type=float, default=30.0)
    args = parser.parse_args()
    if args.run in ("steady", "both"):
        print(f"steady: {args.minutes:g} min, the demo's steady load", flush=True)
        tally = run_demo("steady", args.minutes * 60, args.phase_seconds, args.load_tps)
        print_table("steady", tally, ["warm-up", "steady"])
        if tally.peak_lag_s >= EPISODE_LAG_S:
            # Then the replicas did not keep up with this load on this machine: causes that hold
            # them back are true, and the marks above (every cause false) do not apply.
            print(
                f"  NOT a steady run: the replicas fell {tally.peak_lag_s:.0f} s behind; lower "
                "--load-tps (the lab's replicas apply serially, innodb_flush_log_at_trx_commit=1)"
            )
    if args.run in ("tuning", "both"):
        phases = tuning_plan(parse_phase_seconds(args.phase_seconds))
        duration = sum(p.seconds for p in phases) + args.tail_s
        print(f"tuning story: phases {args.phase_seconds} s + {args.tail_s:g} s", flush=True)
        tally = run_demo("tuning", duration, args.phase_seconds, args.load_tps)
        print_table("tuning story", tally, ["warm-up", "A", "B", "C", "tail"])


if __name__ == "__main__":
    main()
