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


@dataclass(frozen=True, slots=True)
class Series:
    """One series' samples: ``labels`` sorted by name, ``__name__`` among them (the protocol
    requires the order); ``samples`` as (epoch ms, value), oldest first."""

    labels: tuple[tuple[str, str], ...]
    samples: Sequence[tuple[int, float]]


def write_request(series: Iterable[Series]) -> bytes:
    """The serialized ``WriteRequest`` holding ``series`` (field 1, repeated ``TimeSeries``)."""
    out = bytearray()
    stamps: dict[int, bytes] = {}  # a request's samples share a few seconds' timestamps
    for one in series:
        _field(out, 1, _time_series(one, stamps))
    return bytes(out)


def compress(body: bytes) -> bytes:
    """Snappy's block format (not its framing format), as the protocol says."""
    return bytes(cramjam.snappy.compress_raw(body))


# A series' labels as encoded, kept across requests: a fleet sends the same series every second.
_LABELS: dict[tuple[tuple[str, str], ...], bytes] = {}
# 10,000 replicas make ~230,000 raw series (series_store/points.py): kept, not thrashed.
_LABELS_KEPT = 1 << 19
# Sample: double value = 1 (tag 0x09, 64-bit), int64 timestamp = 2 (tag 0x10, varint).
_SAMPLE_VALUE = struct.Struct("<Bd")


def _time_series(series: Series, stamps: dict[int, bytes]) -> bytes:
    out = bytearray(_labels_of(series.labels))
    for at_ms, value in series.samples:
        stamp = stamps.get(at_ms)
        if stamp is None:
            encoded = bytearray(b"\x10")
            _varint(encoded, at_ms & 0xFFFFFFFFFFFFFFFF)
            stamp = stamps[at_ms] = bytes(encoded)
        sample = _SAMPLE_VALUE.pack(0x09, value) + stamp
        # TimeSeries field 2; a sample is at most 20 bytes, so its length is one byte.
        out += b"\x12"
        out.append(len(sample))
        out += sample
    return bytes(out)


def _labels_of(labels: tuple[tuple[str, str], ...]) -> bytes:
    encoded = _LABELS.get(labels)
    if encoded is None:
        if len(_LABELS) >= _LABELS_KEPT:
            _LABELS.clear()
        out = bytearray()
        for name, text in labels:
            label = bytearray()
            _field(label, 1, name.encode())
            _field(label, 2, text.encode())
            _field(out, 1, label)
        encoded = _LABELS[labels] = bytes(out)
    return encoded


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
