"""The tuning journal: steps (parameter changes and annotations) judged per replica channel,
comparisons of windows and channels, annotations, and the journal's export.

Imports :mod:`lagscope.history`, :mod:`lagscope.inventory` and :mod:`lagscope.security`."""
