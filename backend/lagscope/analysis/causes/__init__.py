"""Why a replica is behind (CAUSES.md): per-poll findings and lag episodes, as pure functions.

- :mod:`.model`: the cause codes, a :class:`~.model.Finding` and what diagnosis reads.
- :mod:`.diagnose`: one channel's findings for one poll (:func:`~.diagnose.diagnose`).
- :mod:`.episodes`: episode start/peak/end and the cause timeline (:func:`~.episodes.advance`).
"""
