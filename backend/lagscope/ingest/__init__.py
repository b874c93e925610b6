"""Reading the monitored servers into the store: the tick (read every instance of a cluster at
once), recording its readings, the sources' progress history, applier workers, the heartbeat
writer, and the rollups and retention that keep the store's size bounded.

Imports :mod:`lagscope.inventory` and :mod:`lagscope.security`; never history, journal, alerts."""
