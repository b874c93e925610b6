"""What working out a channel's errant transactions adds to a poll, per channel.

On made-up sets shaped like a long-lived MySQL fleet (the source's UUID, ``--uuids`` former
sources with ``--gaps`` intervals each, 12 transactions of the replica's own) with the texts
already parsed, as the tick has them; and a MariaDB replica with three domains, parsing
included. Prints microseconds per channel-poll; no assertion.

    .venv/bin/python bench/errant_cost.py [--uuids 200] [--gaps 50] [--number 2000]
"""

from __future__ import annotations

import argparse
import timeit
import uuid

from lagscope.analysis.errant import errant_transactions
from lagscope.collectors.gtid import GtidTexts

SOURCE = "b7e2c1d4-6f3a-11ee-8a21-0a58a9feac02"
OWN = "c4d9e0f1-6f3b-11ee-9b44-0a58a9feac03:1-12"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uuids", type=int, default=200)
    parser.add_argument("--gaps", type=int, default=50)
    parser.add_argument("--number", type=int, default=2000)
    args = parser.parse_args()
    others = [str(uuid.UUID(int=i + 1)) for i in range(args.uuids)]
    gaps = ":".join(f"{k * 10 + 1}-{k * 10 + 5}" for k in range(args.gaps))
    former = [f"{u}:{gaps}" for u in others]
    source_text = ",".join([f"{SOURCE}:1-3821940", *former])
    replica_text = ",".join([f"{SOURCE}:1-3821900", *former, OWN])
    on_source, on_replica = GtidTexts(), GtidTexts()
    on_source.gtid_set(source_text)
    on_replica.gtid_set(replica_text)

    def mysql() -> object:
        return errant_transactions(
            "mysql", on_replica, source_text, replica_text, source_uuid=SOURCE,
            source_texts=on_source,
        )  # fmt: skip

    def mariadb() -> object:
        return errant_transactions(
            "mariadb", GtidTexts(), "0-1-500,1-1-20", "0-1-490", source_server_id=1,
            slave_pos="0-1-490,1-1-20", current_pos="0-1-490,1-1-20,77-3-3",
        )  # fmt: skip

    for name, run in (
        (f"MySQL, {args.uuids + 1} UUIDs × {args.gaps} intervals, parsed", mysql),
        ("MariaDB, 3 domains, parsing included", mariadb),
    ):
        seconds = timeit.timeit(run, number=args.number) / args.number
        print(f"{name}: {seconds * 1e6:.0f} µs per channel-poll → {run()}")


if __name__ == "__main__":
    main()
