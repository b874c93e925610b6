"""A notification without the server text quoted in its causes: what a target receives unless it
opted in, since a receiver keeps what it gets (chat history, mail).
"""

from __future__ import annotations

import re
from dataclasses import replace

from lagscope.alerts.payloads.facts import AlertContext, EpisodeFacts, Why

# Server text quoted in a cause's sentence (analysis/causes/words.quote): one “…” span each.
_QUOTED = re.compile("“[^“”]*”")
WITHHELD = "“…”"


def without_server_text(ctx: AlertContext) -> AlertContext:
    """The context with every quote of a server's text in the causes' sentences and actions
    replaced by “…”: a statement's digest still names tables and columns, an error message
    may hold a row's values, and a receiver keeps what it gets (chat history, mail). The
    episode's evidence keeps its figures and flags; its texts (statements, states, errors,
    logins) are left out."""
    return replace(
        ctx,
        why=tuple(
            Why(
                w.cause, w.words, _QUOTED.sub(WITHHELD, w.sentence), _QUOTED.sub(WITHHELD, w.action)
            )
            for w in ctx.why
        ),
        episode=_episode_without_server_text(ctx.episode),
    )


def _episode_without_server_text(ep: EpisodeFacts | None) -> EpisodeFacts | None:
    if ep is None:
        return None
    return replace(
        ep,
        sentence=_QUOTED.sub(WITHHELD, ep.sentence),
        action=_QUOTED.sub(WITHHELD, ep.action),
        evidence={k: v for k, v in ep.evidence.items() if not isinstance(v, str)},
    )
