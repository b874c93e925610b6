"""VictoriaMetrics as the raw-series store past one box: written by the poll owner with the
InfluxDB line protocol (``/influx/write``: one line per poll, at its own millisecond; sent,
retried and bounded by remote_write's sender), read back for the explorer's raw ranges with
``/api/v1/export`` (every sample, not a query's evaluation steps), and bucketed here exactly
as the SQL bucket query buckets the same rows (series_store/buckets.py).

A single node serves both at one URL (``http://host:8428``). A cluster writes through vminsert
and reads through vmselect: ``LAGSCOPE_SERIES_URL=http://vminsert:8480/insert/0`` and
``LAGSCOPE_SERIES_SELECT_URL=http://vmselect:8481/select/0/prometheus`` (tenant 0). The bearer
token, if any, goes to these URLs and nowhere else (no redirect is followed).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Literal

import httpx

from lagscope.analysis.buckets import BucketPlan
from lagscope.config import Settings
from lagscope.errors import SeriesStoreUnavailable
from lagscope.history.series import Bucket
from lagscope.remote_write.sender import RemoteWriter
from lagscope.series_store.buckets import bucketed
from lagscope.series_store.points import (
    CHANNEL_LABEL,
    HEADERS,
    INSTANCE_LABEL,
    MICROS,
    encode,
    metric_name,
    series_lines,
)

# Read back one second either side of the range, then cut exactly: the export's bounds are not
# documented to the millisecond.
_MARGIN_MS = 1_000
# The catalog's column names; nothing else reaches a selector.
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class VictoriaMetrics:
    def __init__(
        self,
        insert_url: str,
        select_url: str = "",
        bearer_token: str = "",
        timeout_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.select_url = (select_url or insert_url).rstrip("/")
        headers = {"Authorization": f"Bearer {bearer_token}"} if bearer_token else {}
        self._client = httpx.Client(
            headers=headers, timeout=timeout_s, follow_redirects=False, transport=transport
        )

    @property
    def export_url(self) -> str:
        return f"{self.select_url}/api/v1/export"

    def close(self) -> None:
        self._client.close()

    def buckets(
        self,
        metric: str,
        per: Literal["channel", "instance"],
        scale: int,
        plan: BucketPlan,
        keys: Sequence[int],
        lo_us: int,
    ) -> Iterator[Bucket]:
        """:class:`~lagscope.history.series.RawSeries`: the raw buckets, read from here."""
        if not keys:
            return
        label = CHANNEL_LABEL if per == "channel" else INSTANCE_LABEL
        # Ids only: no text from the request reaches the selector.
        ids = "|".join(str(int(k)) for k in keys)
        found = self.export(
            f'{metric_name(metric)}{{{label}=~"{ids}"}}',
            lo_us // 1000 - _MARGIN_MS,
            plan.hi_us // 1000 + _MARGIN_MS,
        )
        by_key: dict[int, list[tuple[int, float]]] = {}
        for labels, samples in found:
            by_key.setdefault(int(labels[label]), []).extend(samples)
        for key in sorted(by_key):
            for point, newest_us in bucketed(sorted(by_key[key]), scale, plan, lo_us):
                yield key, point, newest_us

    def rows(
        self, channel_id: int, columns: Sequence[str], spans_us: Sequence[tuple[int, int]]
    ) -> list[tuple[int, dict[str, float]]]:
        """:class:`~lagscope.history.series.RawSeries`: a channel's polls, read from here. A
        poll is the line its ``ts_micros`` came in (every channel line has one); its time is
        that line's millisecond plus those microseconds, as the ``samples`` row has it."""
        for column in columns:
            if not _NAME.fullmatch(column):
                raise ValueError(f"not a series column: {column!r}")
        names = "|".join(metric_name(c) for c in (MICROS, *columns))
        selector = f'{{__name__=~"{names}",{CHANNEL_LABEL}="{int(channel_id)}"}}'
        prefix = len(metric_name(""))
        found: list[tuple[int, dict[str, float]]] = []
        for lo_us, hi_us in spans_us:
            by_metric: dict[str, dict[int, float]] = {}
            for labels, samples in self.export(
                selector, lo_us // 1000 - _MARGIN_MS, hi_us // 1000 + _MARGIN_MS
            ):
                # A sample sent twice (a retry the store had in fact taken) counts once.
                by_metric.setdefault(labels["__name__"][prefix:], {}).update(samples)
            micros = by_metric.pop(MICROS, {})
            for at_ms in sorted(micros):
                at_us = at_ms * 1000 + int(micros[at_ms])
                if lo_us <= at_us < hi_us:
                    values = {c: v[at_ms] for c, v in by_metric.items() if at_ms in v}
                    found.append((at_us, values))
        return found

    def export(
        self, selector: str, start_ms: int, end_ms: int
    ) -> list[tuple[dict[str, str], list[tuple[int, float]]]]:
        """Every sample of the series ``selector`` matches in [start, end]: (labels, [(ms,
        value)]) per line of the export. A store that does not answer, or answers otherwise
        than 200, is a :class:`SeriesStoreUnavailable` naming it."""
        params = {"match[]": selector, "start": _seconds(start_ms), "end": _seconds(end_ms)}
        try:
            answer = self._client.get(self.export_url, params=params)
        except httpx.HTTPError as exc:
            raise SeriesStoreUnavailable(
                f"the raw-series store at {self.select_url} did not answer ({type(exc).__name__})"
            ) from exc
        if answer.status_code != 200:
            raise SeriesStoreUnavailable(
                f"the raw-series store at {self.select_url} answered HTTP "
                f"{answer.status_code}: {answer.text[:200].strip()}"
            )
        found = []
        for line in answer.text.splitlines():
            if not line.strip():
                continue
            block = json.loads(line)
            samples = [
                (int(t), float(v))
                for t, v in zip(block["timestamps"], block["values"], strict=True)
                if v is not None and math.isfinite(v)
            ]
            found.append((dict(block["metric"]), samples))
        return found


def _seconds(ms: int) -> str:
    return f"{ms // 1000}.{ms % 1000:03d}"


def from_settings(settings: Settings) -> VictoriaMetrics | None:
    """The configured raw-series store, or None when raw series live in the store's tables only."""
    if not settings.series_url:
        return None
    return VictoriaMetrics(
        settings.series_url,
        settings.series_select_url,
        settings.series_bearer_token,
        timeout_s=settings.remote_write_timeout_s * 2,
    )


def series_writer(settings: Settings) -> RemoteWriter | None:
    """The poll owner's sender of every poll's raw series to the configured store, sent, retried
    and bounded like the remote write (its every_s, max_waiting and timeout); None without one."""
    if not settings.series_url:
        return None
    return RemoteWriter(
        f"{settings.series_url.rstrip('/')}/influx/write?precision=ms",
        bearer_token=settings.series_bearer_token,
        every_s=settings.remote_write_every_s,
        max_waiting=settings.remote_write_max_waiting,
        timeout_s=settings.remote_write_timeout_s,
        to_points=series_lines,
        encode=encode,
        headers=HEADERS,
        name="raw-series store",
    )
