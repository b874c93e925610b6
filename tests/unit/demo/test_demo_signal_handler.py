"""The demo's signal handler (demo/stopping.py ``StopSignals``): the first signal stops the demo
wherever it is, a later one never cuts short the clean-up the first set going."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

import pytest

from lagscope.demo.stopping import DemoStopped, StopSignals


def test_the_first_signal_stops_the_demo_and_a_second_lets_the_clean_up_finish(
    tmp_path: Path,
) -> None:
    signals = StopSignals()
    started = tmp_path / "lab"
    (started / "source" / "data").mkdir(parents=True)
    with pytest.raises(DemoStopped):
        try:
            signals._handle(signal.SIGINT, None)  # Ctrl-C while the lab starts
        except BaseException:
            # The lab's own clean-up as the exception passes through it, and an impatient
            # second Ctrl-C in the middle of it.
            signals._handle(signal.SIGINT, None)
            shutil.rmtree(started)
            raise
    assert signals.requested and not started.exists()


def test_once_the_demo_cleans_up_no_signal_raises() -> None:
    signals = StopSignals()
    signals.cleaning_up = True
    signals._handle(signal.SIGTERM, None)
    signals._handle(signal.SIGINT, None)
    assert signals.requested
