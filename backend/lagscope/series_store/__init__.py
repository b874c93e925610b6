"""The raw-series store past one box (VictoriaMetrics): every poll's raw series written to it
and the explorer's raw ranges read back from it, through history/series.py's ``RawSeries``."""
