"""The largest answer a poll reads from the real MariaDB lab, against the caps of
collectors/answer_limits.py: bytes per answer (one round trip) and the largest packet.

Every server is polled as a tick polls it, heartbeat included, and once more with the cause
readings forced (``behind_elsewhere``: the batch a replica behind sends). Figures, not
assertions; quoted in docs/monitoring.md as the caps' margin.

    .venv/bin/python bench/answer_sizes.py [--polls 20]
"""

from __future__ import annotations

import argparse

from lagscope.collectors import answer_limits
from lagscope.collectors.executor import ConnectionSpec, PyMySQLExecutor
from lagscope.collectors.heartbeat import HeartbeatTable
from lagscope.collectors.poller import InstancePoller
from lagscope.lab import Lab, LabConfig


class _Counted(answer_limits.AnswerBudget):
    largest_answer = 0
    largest_packet = 0

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.read = 0

    def take(self, count: int) -> None:
        super().take(count)
        self.read += count
        _Counted.largest_packet = max(_Counted.largest_packet, count)
        _Counted.largest_answer = max(_Counted.largest_answer, self.read)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=20)
    args = parser.parse_args()
    import lagscope.collectors.connection as connection

    connection.AnswerBudget = _Counted  # type: ignore[misc]
    lab = Lab.start(LabConfig(replicas=2, proxied=("replica2",)))
    try:
        user, password = lab.credentials.monitor
        for name in ("source", "replica1", "replica2"):
            server = lab.server(name)
            spec = ConnectionSpec(server.host, server.port, user, password)
            poller = InstancePoller(PyMySQLExecutor(spec), heartbeat=HeartbeatTable())
            for behind in (False, True):
                _Counted.largest_answer = _Counted.largest_packet = 0
                for _ in range(args.polls):
                    poller.poll(behind_elsewhere=behind)
                print(
                    f"{name:9} {'cause readings' if behind else 'healthy poll  '}: largest "
                    f"answer {_Counted.largest_answer} bytes, largest packet "
                    f"{_Counted.largest_packet} bytes"
                )
            poller.close()
        print(
            f"caps: {answer_limits.PACKET_BYTES} bytes per packet, "
            f"{answer_limits.ANSWER_BYTES} bytes per answer"
        )
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
