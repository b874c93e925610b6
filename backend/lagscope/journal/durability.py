"""A journal step that relaxed a replica's flush settings, with the capacity its fsync cost
predicted and the capacity measured after it (analysis/durability.py).

The cost is what the store kept of the step's before window, priced by the side panel's own
function (history/durability.py ``predict_window``): the panel read just before the step showed
this prediction.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session

from lagscope.analysis.durability import DURABILITY_PARAMS
from lagscope.history.durability import predict_window
from lagscope.journal.steps import Entry


def with_durability(session: Session, entries: list[Entry]) -> list[Entry]:
    """The entries, each impact of a replica whose flush settings the step relaxed given its
    prediction."""
    out: list[Entry] = []
    for entry in entries:
        changed: dict[int, dict[str, tuple[str | None, str | None]]] = {}
        for change, _ in entry.step.changes:
            if change.name in DURABILITY_PARAMS:
                changed.setdefault(change.instance_id, {})[change.name] = (
                    change.old_value,
                    change.new_value,
                )
        if not changed:
            out.append(entry)
            continue
        impacts = []
        for found in entry.impacts:
            changes = changed.get(found.instance.id)
            if changes is None:
                impacts.append(found)
                continue
            prediction = predict_window(
                session,
                found.instance.id,
                found.channel.id,
                *entry.before,
                changes,
                found.impact.after.capacity,
            )
            impacts.append(replace(found, durability=prediction))
        out.append(replace(entry, impacts=impacts))
    return out
