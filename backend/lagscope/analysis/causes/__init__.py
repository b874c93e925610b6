"""Why a replica is behind (docs/causes.md): per-poll findings and lag episodes, as pure functions.

- :mod:`.model`: the cause codes, a :class:`~.model.Finding` and what diagnosis reads.
- :mod:`.diagnose`: one channel's findings for one poll (:func:`~.diagnose.diagnose`), from the
  rule families :mod:`.rules_state`, :mod:`.rules_receive`, :mod:`.rules_applier` (with
  :mod:`.rules_blocked`) and :mod:`.rules_apply`, reading one poll's view (:mod:`.seen`) with
  the memory of recent polls in :mod:`.history` and the matched server state strings in
  :mod:`.states`.
- :mod:`.episodes`: episode start/peak/end and the cause timeline (:func:`~.episodes.advance`).
"""
