"""A remote-write request as it goes on the wire: the ``WriteRequest`` protocol buffer
(prometheus/prompb/remote.proto and types.proto), compressed with Snappy's block format.

Encoded by hand rather than with a generated module: the four messages a write needs are a few
lines each, and Lagscope then needs no protobuf runtime. Only what the receivers read is
written: series (labels, samples); no exemplars, histograms or metadata.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import cramjam

CONTENT_TYPE = "application/x-protobuf"
HEADERS = {
    "Content-Type": CONTENT_TYPE,
    "Content-Encoding": "snappy",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
}

_DOUBLE = struct.Struct("<d")


@dataclass(frozen=True, slots=True)
class Series:
    """One series' samples: ``labels`` sorted by name, ``__name__`` among them (the protocol
    requires the order); ``samples`` as (epoch ms, value), oldest first."""

    labels: tuple[tuple[str, str], ...]
    samples: Sequence[tuple[int, float]]


def write_request(series: Iterable[Series]) -> bytes:
    """The serialized ``WriteRequest`` holding ``series`` (field 1, repeated ``TimeSeries``)."""
    out = bytearray()
    for one in series:
        _field(out, 1, _time_series(one))
    return bytes(out)


def compress(body: bytes) -> bytes:
    """Snappy's block format (not its framing format), as the protocol says."""
    return bytes(cramjam.snappy.compress_raw(body))


def _time_series(series: Series) -> bytes:
    out = bytearray()
    for name, text in series.labels:
        label = bytearray()
        _field(label, 1, name.encode())
        _field(label, 2, text.encode())
        _field(out, 1, label)
    for at_ms, value in series.samples:
        # Sample: double value = 1 (64-bit), int64 timestamp = 2 (varint).
        sample = bytearray(b"\x09")
        sample += _DOUBLE.pack(value)
        sample += b"\x10"
        _varint(sample, at_ms & 0xFFFFFFFFFFFFFFFF)
        _field(out, 2, sample)
    return bytes(out)


def _field(out: bytearray, number: int, payload: bytes | bytearray) -> None:
    """A length-delimited field (wire type 2)."""
    _varint(out, number << 3 | 2)
    _varint(out, len(payload))
    out += payload


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
