"""How soon each cause is named, over several runs of the live naming test (docs/causes.md,
"Making each cause happen"): tests/integration/test_causes_named_live.py makes every lab
incident happen under the real pipeline (worker, beat, store; 1 s polls) and records, per cause, the
polls and seconds from the cause's start to the first poll that named it with its evidence. This
runs that module ``--runs`` times (each with its own lab and pipeline) and prints, per cause, the
polls of each run and the seconds' median. Figures, not assertions: the test asserts the bounds.

    .venv/bin/python bench/cause_naming.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = "tests/integration/test_causes_named_live.py"


def one_run(out: Path) -> list[dict[str, object]]:
    written = Path("/tmp/lagscope-cause-naming.json")  # where the test writes its figures
    written.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", MODULE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(done.stdout[-3000:], file=sys.stderr)
    if not written.exists():
        raise SystemExit("the naming test wrote no figures")
    shutil.copy(written, out)
    loaded: list[dict[str, object]] = json.loads(out.read_text())
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs: list[list[dict[str, object]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            runs.append(one_run(Path(tmp) / f"run{i}.json"))
            print(f"run {i + 1}/{args.runs} done", file=sys.stderr)
    causes: dict[str, list[dict[str, object]]] = {}
    for run in runs:
        for row in run:
            causes.setdefault(str(row["incident"]), []).append(row)
    print(f"{'incident':22s} {'cause':22s} polls per run      median s  evidence (last run)")
    for incident, rows in causes.items():
        polls = " ".join(str(r["polls"]) for r in rows)
        seconds = statistics.median(float(str(r["seconds"])) for r in rows)
        evidence = json.dumps(rows[-1]["evidence"], default=str)[:120]
        print(f"{incident:22s} {rows[0]['cause']!s:22s} {polls:18s} {seconds:8.1f}  {evidence}")


if __name__ == "__main__":
    main()
