"""Everything that speaks SQL to monitored servers: flavor adapters, readings, GTID math.

Above this package nothing sees a server column name, a driver exception or a version check:
callers get :class:`~lagscope.collectors.snapshot.InstanceSnapshot` from
:class:`~lagscope.collectors.poller.InstancePoller` and errors from :mod:`lagscope.errors`.
"""
