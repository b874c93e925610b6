"""The secret key's rules: the placeholder only the demo may run with, and how strong a real key
must be.

The key encrypts stored credentials at rest, so a weak or placeholder key would make that
encryption worthless; a demo store with a real key would open a real store to every caller.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from zxcvbn import zxcvbn

if TYPE_CHECKING:
    from lagscope.config.settings import Settings

PLACEHOLDER_SECRET = "change-me"
MIN_KEY_CHARS = 32
# zxcvbn's estimate of the guesses an attacker who knows the usual patterns (words, keyboard
# walks, sequences, repeats, dates) needs. It rates each random character as 10 guesses, so it
# underrates random keys: 32 random hex characters (128 bits) scored 10^27.0 at worst in
# 13,000 tries (median ~10^31.5), a `generate-key` key ~10^43; "0123456789"*4 scores ~10^2,
# LagscopeProductionMysqlSecret2026 ~10^16, "correct horse battery staple orange" 10^25.
MIN_KEY_GUESSES_LOG10 = 26.0
ZXCVBN_MAX_CHARS = 72  # zxcvbn refuses longer input: a longer key is judged by its start
# Words an operator is likely to put in a key here, which zxcvbn's dictionaries lack.
KEY_CONTEXT_WORDS = (
    "lagscope", "lag", "scope", "mysql", "mariadb", "replica", "replication", "secret",
    "key", "prod", "production", "staging", "demo", "admin", "password", "changeme",
)  # fmt: skip


def generate_key() -> str:
    """A key for LAGSCOPE_SECRET_KEY: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def weak_key_problem(key: str) -> str | None:
    """Why a secret key is too weak to protect stored passwords, or None.

    Judged by zxcvbn (Dropbox's estimator, the maintained Python port), not a rule of ours: a
    key that is long but made of a pattern ("0123456789"*4, "Summer2026!"*3) is refused.
    """
    if len(key) < MIN_KEY_CHARS:
        return f"{len(key)} characters, at least {MIN_KEY_CHARS} are needed"
    estimate = zxcvbn(key[:ZXCVBN_MAX_CHARS], user_inputs=list(KEY_CONTEXT_WORDS))
    guesses_log10 = float(estimate["guesses_log10"])
    if guesses_log10 < MIN_KEY_GUESSES_LOG10:
        warning = estimate["feedback"].get("warning") or "a guessable pattern"
        return (
            f"the zxcvbn strength estimator guesses it in about 10^{guesses_log10:.0f} tries "
            f"({warning.rstrip('.').lower()}); at least 10^{MIN_KEY_GUESSES_LOG10:.0f} are needed"
        )
    return None


def refuse_unsafe_secrets(settings: Settings) -> None:
    """Stop the start on a key that cannot protect the store, or on a demo given a real one."""
    if settings.demo:
        if settings.secret_key != PLACEHOLDER_SECRET:
            # Demo mode lets every caller in as an admin; a real key marks a real store.
            raise ValueError(
                "LAGSCOPE_DEMO=1 lets every caller in as an admin without a login and is "
                "refused together with a real LAGSCOPE_SECRET_KEY (a real deployment's "
                "store): unset LAGSCOPE_DEMO, or run the throwaway demo without the key"
            )
        if settings.old_keys():
            # An old key reads a real store's credentials just as well as the current one.
            raise ValueError(
                "LAGSCOPE_DEMO=1 is refused together with LAGSCOPE_OLD_SECRET_KEYS: the "
                "demo's store has no credentials under any other key, and a real key there "
                "would open a real store's credentials to every caller"
            )
        return
    if settings.secret_key == PLACEHOLDER_SECRET:
        raise ValueError(
            "LAGSCOPE_SECRET_KEY must be set (it encrypts stored credentials); "
            "only LAGSCOPE_DEMO=1 may run with the placeholder"
        )
    if problem := weak_key_problem(settings.secret_key):
        raise ValueError(
            f"LAGSCOPE_SECRET_KEY is too weak: {problem}; make one with "
            "`lagscope secrets generate-key`"
        )
