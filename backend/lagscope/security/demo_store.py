"""Demo mode runs only on a store ``lagscope demo`` made.

Demo mode makes every caller an admin without a login. On a deployment's store that admin
could create accounts, tokens and webhooks that outlive the demo, so the API refuses demo mode
unless the store carries the demo's mark (table ``demo_store``), which the demo writes into the
fresh store it has just made and which nothing else writes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from lagscope.errors import Conflict, InvalidInput
from lagscope.models import Cluster, DemoStore, User

MARK_ROW_ID = 1


def mark_demo_store(session: Session) -> None:
    """Mark a store the demo has just made. A store that already holds users or clusters was
    not just made: it is refused, so a demo pointed at a real store cannot open it up."""
    if is_demo_store(session):
        return
    if session.scalar(select(exists().where(User.id.is_not(None)))) or session.scalar(
        select(exists().where(Cluster.id.is_not(None)))
    ):
        raise Conflict("this store already holds users or clusters: only a new one is a demo's")
    session.add(DemoStore(id=MARK_ROW_ID, created_at=datetime.now(UTC)))
    session.flush()


def is_demo_store(session: Session) -> bool:
    return session.get(DemoStore, MARK_ROW_ID) is not None


def require_demo_store(session: Session) -> None:
    if not is_demo_store(session):
        raise InvalidInput(
            "LAGSCOPE_DEMO=1 lets every caller in as an admin, so it runs only on a store "
            "`lagscope demo` made, and this one was not (a real deployment's store, or a "
            "new one): unset LAGSCOPE_DEMO and log in, or run `lagscope demo` (`make demo`)"
        )
