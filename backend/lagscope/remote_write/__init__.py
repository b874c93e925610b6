"""Every poll's figures pushed to the user's own time-series database with Prometheus's
remote-write protocol (Prometheus with its receiver on, Mimir, VictoriaMetrics, Thanos
Receive): each sample at its own poll's millisecond timestamp, so a Grafana panel over
Lagscope's metrics has the poll's resolution, not the scrape's (docs/api.md, "Remote
write").
"""
