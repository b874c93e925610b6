"""How much a monitored server may send, and for how long, before its answer is refused.

A poll's answer is a few kilobytes (the lab's largest batch, cause readings included, is
measured in docs/monitoring.md); a server that sends far more, or trickles its bytes so that
every ``recv`` returns before the socket's read timeout, must cost only its own sample and
never the worker's memory or a poll thread for ever. Three bounds, checked as bytes arrive:

- **per packet**: the length in a packet's header is compared before its body is read, so a
  400 MB packet is refused without allocating it;
- **per answer**: all packets of one batch (one round trip) together;
- **a deadline**: the whole answer must arrive within the read timeout; the socket's timeout
  is lowered to what is left, so a trickle is cut off when the time is up.

Over a bound, :class:`~lagscope.errors.UnexpectedAnswer` is raised and the connection closed.

The legitimate extremes are GTID sets (``gtid_executed`` of a server that saw many source
UUIDs, the same sets again per channel in SHOW SLAVE STATUS) and a multi-source replica's
status rows, one packet per channel: hundreds of kilobytes at the very most. 4 MiB per packet
and 16 MiB per answer leave a margin of well over a hundred times the lab's largest answer,
and bound what 32 poll threads can hold at once to about half a gigabyte.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from lagscope.errors import UnexpectedAnswer

PACKET_BYTES: Final = 4 * 1024 * 1024
ANSWER_BYTES: Final = 16 * 1024 * 1024
# Exceptions a parser (ours or the driver's) raises on values it did not expect: an odd
# answer, not a bug of the caller's. Anything else still escapes (and is logged as a bug).
ODD_ANSWER: Final[tuple[type[Exception], ...]] = (
    LookupError,
    ValueError,  # UnicodeDecodeError too
    TypeError,
    ArithmeticError,  # OverflowError, decimal errors
    AttributeError,
    AssertionError,  # PyMySQL's packet reader asserts on a read past the packet's end
)
_WHAT_CHARS = 200


@dataclass(frozen=True, slots=True)
class AnswerLimits:
    packet_bytes: int = PACKET_BYTES
    answer_bytes: int = ANSWER_BYTES


DEFAULT_LIMITS: Final = AnswerLimits()


class AnswerBudget:
    """One answer's bytes and time left; ``take`` is called before each read from the socket."""

    __slots__ = ("_clock", "_left", "deadline", "deadline_s", "limits", "server")

    def __init__(
        self,
        server: str,
        limits: AnswerLimits,
        deadline_s: float | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.server = server
        self.limits = limits
        self.deadline_s = deadline_s
        self.deadline = None if deadline_s is None else clock() + deadline_s
        self._left = limits.answer_bytes
        self._clock = clock

    def take(self, count: int) -> None:
        if count > self.limits.packet_bytes:
            raise UnexpectedAnswer(
                self.server,
                f"a packet of {count} bytes, over {self.limits.packet_bytes} bytes (the cap "
                "per packet)",
            )
        self._left -= count
        if self._left < 0:
            raise UnexpectedAnswer(
                self.server,
                f"an answer over {self.limits.answer_bytes} bytes (the cap per answer)",
            )

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - self._clock()

    def late(self) -> UnexpectedAnswer:
        return UnexpectedAnswer(
            self.server, f"the answer did not arrive within {self.deadline_s or 0:.1f} s"
        )


def describe(exc: BaseException) -> str:
    """What a parser stumbled on, as one short line of printable text: the message may quote
    the server's bytes (NUL, control characters, bidi overrides are shown escaped)."""
    message = str(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    shown = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return shown if len(shown) <= _WHAT_CHARS else shown[: _WHAT_CHARS - 1] + "…"


def odd_answer(server: str, exc: BaseException, reading: str | None = None) -> UnexpectedAnswer:
    return UnexpectedAnswer(server, describe(exc), reading)
