"""Reading the store back: a cluster's status and live feed, series for charts, verdict runs,
the Prometheus exposition, group commit, the workers heatmap and the time-window helpers.

Nothing here talks to a monitored server. Imports :mod:`lagscope.inventory`; never ingest."""
