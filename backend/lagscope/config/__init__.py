"""The settings every process reads at start (``LAGSCOPE_*``), and the rules they are held to.

One import path for them all (``from lagscope.config import Settings, get_settings``): the
class lists the knobs (settings), its rules live beside it by subject — the secret key (keys),
single sign-on (sso), who the API listens to (network) — and beat's table of periodic jobs with
the retention per table (jobs).
"""

from __future__ import annotations

from lagscope.config.jobs import PERIODIC_JOBS, PeriodicJob, Retention
from lagscope.config.keys import (
    KEY_CONTEXT_WORDS,
    MIN_KEY_CHARS,
    MIN_KEY_GUESSES_LOG10,
    PLACEHOLDER_SECRET,
    ZXCVBN_MAX_CHARS,
    generate_key,
    weak_key_problem,
)
from lagscope.config.network import is_loopback, require_loopback_or_allowed
from lagscope.config.settings import Settings, get_settings
from lagscope.config.sso import OIDC_CALLBACK_PATH

__all__ = [
    "KEY_CONTEXT_WORDS",
    "MIN_KEY_CHARS",
    "MIN_KEY_GUESSES_LOG10",
    "OIDC_CALLBACK_PATH",
    "PERIODIC_JOBS",
    "PLACEHOLDER_SECRET",
    "ZXCVBN_MAX_CHARS",
    "PeriodicJob",
    "Retention",
    "Settings",
    "generate_key",
    "get_settings",
    "is_loopback",
    "require_loopback_or_allowed",
    "weak_key_problem",
]
