"""One direction of a proxied link: chunks stamped on arrival, delivered a delay later, paced to
a bandwidth, held while the link is paused.

What a far network does to the bytes, apart from the proxy's listening, control and cutting, so
the pacing and back-pressure can be read in one place.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

_CHUNK = 65536
# Per direction, 256 chunks (≤ 16 MiB) may wait; beyond that the proxy stops reading and TCP
# flow control pushes back on the sender, as a slow real link would.
_QUEUE_CHUNKS = 256
_EOF = b""
# A limited link delivers in slices of at most this many seconds' worth of bytes, so throughput
# is smooth at 50 ms resolution and a lifted or changed limit takes effect within one slice.
_SLICE_S = 0.05


class Pacer:
    """Paces one direction of a link to ``rate`` bytes/s: a virtual clock of when the link is
    next free. Only touched from the proxy's event loop."""

    def __init__(self) -> None:
        self.rate: float | None = None
        self._free_at = 0.0

    def set_rate(self, rate: float | None) -> None:
        self.rate = rate
        self._free_at = 0.0  # a new limit starts from an idle link, not the old one's debt

    def slice_size(self) -> int:
        return _CHUNK if self.rate is None else max(1, int(self.rate * _SLICE_S))

    async def take(self, size: int) -> None:
        """Wait until ``size`` bytes may go out at the current rate."""
        rate = self.rate
        if rate is None:
            return
        loop = asyncio.get_running_loop()
        start = max(loop.time(), self._free_at)
        self._free_at = start + size / rate
        # Send at the end of the slice's time, so the bytes delivered by any instant never
        # exceed rate × elapsed.
        await asyncio.sleep(max(0.0, self._free_at - loop.time()))


class _InFlight:
    """Bytes read but not yet delivered on one direction. Under a bandwidth limit the proxy
    holds no more than the link's bandwidth × delay (what a real link has in flight) plus a
    little, so the sender feels the thin link through TCP flow control at once, as it would on
    a WAN, instead of filling megabytes of proxy queue first."""

    def __init__(self, pacer: Pacer, delay_s: Callable[[], float]) -> None:
        self.queued = 0
        self._pacer = pacer
        self._delay_s = delay_s
        self._room = asyncio.Event()
        self._room.set()

    def _limit(self) -> float | None:
        rate = self._pacer.rate
        return None if rate is None else rate * (self._delay_s() + _SLICE_S * 2) + _CHUNK

    async def wait_for_room(self) -> None:
        bound = self._limit()
        if bound is not None and self.queued > bound:
            self._room.clear()
            await self._room.wait()

    def delivered(self, size: int) -> None:
        self.queued -= size
        bound = self._limit()
        if bound is None or self.queued <= bound:
            self._room.set()


async def forward(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    pacer: Pacer,
    delay_s: Callable[[], float],
    flowing: asyncio.Event,
) -> None:
    """Carry one direction of a link until EOF: each chunk stamped on arrival and written
    ``delay_s()`` later (the delay as it is when the chunk is read), in order, at the pacer's
    rate, and only while ``flowing`` is set."""
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(maxsize=_QUEUE_CHUNKS)
    loop = asyncio.get_running_loop()
    inflight = _InFlight(pacer, delay_s)

    async def read_side() -> None:
        while True:
            data = await reader.read(_CHUNK)
            inflight.queued += len(data)
            await queue.put((loop.time() + delay_s(), data))
            if data == _EOF:
                return
            await inflight.wait_for_room()

    async def write_side() -> None:
        while True:
            due, data = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            await flowing.wait()
            if data == _EOF:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            view = memoryview(data)
            while view:
                size = pacer.slice_size()
                piece, view = view[:size], view[size:]
                await pacer.take(len(piece))
                # Paused while waiting for the link: hold the rest as well.
                await flowing.wait()
                writer.write(piece)
                await writer.drain()
                inflight.delivered(len(piece))

    async with asyncio.TaskGroup() as group:
        group.create_task(read_side())
        group.create_task(write_side())
