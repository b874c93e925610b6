"""Why a replica is behind (CAUSES.md): per-poll findings and lag episodes, as pure functions.

- :mod:`.model`: the cause codes, a :class:`~.model.Finding` and what diagnosis reads.
- :mod:`.diagnose`: one channel's findings for one poll (:func:`~.diagnose.diagnose`), from the
  rule families :mod:`.rules_state`, :mod:`.rules_receive`, :mod:`.rules_applier` and
  :mod:`.rules_apply`, with the memory of recent polls in :mod:`.history` and the matched
  server state strings in :mod:`.states`.
- :mod:`.compare_link`: "is the far replica behind because of the network?"
  (:func:`~.compare_link.far_behind_because_of_network`).
- :mod:`.episodes`: episode start/peak/end and the cause timeline (:func:`~.episodes.advance`).
"""
