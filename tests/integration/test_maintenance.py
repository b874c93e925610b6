"""Rollups and retention on a real store: SQLite file (and, for the rollups, which PostgreSQL
computes in SQL, a throwaway PostgreSQL), schema by Alembic, rows read back.

Raw samples with known values are written straight into ``samples`` (the poll path has its own
tests); :func:`roll_up` and :func:`enforce_retention` then run as the periodic job runs them, and
the rows they leave are compared with figures worked out by hand in the comments, never with
:mod:`lagscope.analysis.rollup` (which would check the code against itself).

No lab is needed; the module is marked ``integration`` because it migrates a real store.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session, sessionmaker

from lagscope.analysis.codes import Verdict
from lagscope.config import Retention
from lagscope.db import make_engine, make_session_factory
from lagscope.ingest.rollups import enforce_retention, roll_up
from lagscope.models import (
    Channel,
    InstanceSample,
    Sample,
    SampleRollup1h,
    SampleRollup1m,
)
from lagscope.store_setup import upgrade
from tests.factories import make_cluster, sqlite_store

from .postgres import ThrowawayPostgres

pytestmark = pytest.mark.integration

OK, RECV, APPLY, DOWN = (
    Verdict.CAUGHT_UP,
    Verdict.RECEIVE_BOUND,
    Verdict.APPLY_BOUND,
    Verdict.UNREACHABLE,
)
HOUR_12 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
MICRO = timedelta(microseconds=1)
_ = None  # an unknown metric in the tables below (NULL, never 0)


def at(minute: int, second: float = 0.0) -> datetime:
    """12:mm:ss on the test day."""
    return HOUR_12 + timedelta(minutes=minute, seconds=second)


def epoch(moment: datetime) -> float:
    return moment.timestamp()


@dataclass(frozen=True)
class Store:
    sessions: sessionmaker[Session]
    channel_a: int
    channel_b: int
    instance_id: int


def _cluster(sessions: sessionmaker[Session]) -> Store:
    with sessions() as session, session.begin():
        servers = [("src", 3306, "source"), ("r1", 3307)]
        _, named = make_cluster(session, "rollup", servers, password="pw")
        replica = named["r1"]
        # A MariaDB multi-source replica: two connections, so buckets must stay per channel.
        a = Channel(name="", first_seen_at=HOUR_12 - timedelta(days=800))
        b = Channel(name="b", first_seen_at=HOUR_12 - timedelta(days=800))
        replica.channels.extend([a, b])
        session.flush()
        return Store(sessions, a.id, b.id, replica.id)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with sqlite_store(tmp_path) as sessions:
        yield _cluster(sessions)


@pytest.fixture(params=["sqlite", "postgresql"])
def rollup_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The rollups run in Python on SQLite and as SQL on PostgreSQL (ingest/rollups_sql.py):
    the same hand figures for both."""
    if request.param == "sqlite":
        with sqlite_store(tmp_path) as sessions:
            yield _cluster(sessions)
        return
    server: ThrowawayPostgres = request.getfixturevalue("postgres")
    url = server.new_database("rollup")
    upgrade(url)
    engine = make_engine(url)
    try:
        yield _cluster(make_session_factory(engine))
    finally:
        engine.dispose()


# ---------------------------------------------------------------------------------------------
# Raw samples of channel A. Columns: second in the minute, verdict, lag_s, trx_behind,
# not_received, received_not_applied, apply_rate, source_rate. trx = not_received + r_n_a.
# ---------------------------------------------------------------------------------------------
Row = tuple[
    float, Verdict, float | None, int | None, int | None, int | None, float | None, float | None
]

RAW_A: dict[int, list[Row]] = {
    # Caught up, lag creeping up. The last sample is 1 µs before the minute ends.
    0: [
        (0, OK, 0.5, 0, 0, 0, 100.0, 130.0),
        (10, OK, 1.0, 1, 0, 1, 110.0, 130.0),
        (20, OK, 1.5, 2, 1, 1, 120.0, 130.0),
        (30, OK, 2.0, 3, 1, 2, 130.0, 130.0),
        (40, OK, 2.5, 4, 2, 2, 140.0, 130.0),
        (59.999999, OK, 3.0, 5, 2, 3, 150.0, 130.0),
    ],
    # Apply-bound, with two polls where nothing was known (NULL lag is not lag 0).
    1: [
        (0, APPLY, 4.0, 40, 0, 40, 50.0, 130.0),
        (10, APPLY, _, _, _, _, _, _),
        (20, APPLY, 6.0, 60, 0, 60, 70.0, 130.0),
        (30, OK, 1.0, 10, 0, 10, 200.0, 130.0),
        (40, OK, 1.0, 10, 0, 10, 200.0, 130.0),
        (50, OK, _, _, _, _, _, _),
    ],
    # The replica was unreachable for 30 s: those samples carry a verdict and nothing else.
    2: [
        (0, OK, 0.2, 0, 0, 0, 120.0, 100.0),
        (10, DOWN, _, _, _, _, _, _),
        (20, DOWN, _, _, _, _, _, _),
        (30, DOWN, _, _, _, _, _, _),
        (40, OK, 0.4, 0, 0, 0, 90.0, 100.0),
        (50, OK, 0.6, 0, 0, 0, 90.0, 100.0),
    ],
}
# The minute that is still running at the first roll-up: half of it exists then.
MINUTE_3_EARLY: list[Row] = [
    (0, RECV, 2.0, 20, 20, 0, 100.0, 120.0),
    (10, RECV, 4.0, 40, 40, 0, 100.0, 120.0),
    (20, RECV, 6.0, 60, 60, 0, 100.0, 120.0),
]
MINUTE_3_LATE: list[Row] = [
    (30, RECV, 8.0, 80, 80, 0, 100.0, 120.0),
    (40, RECV, 10.0, 100, 100, 0, 100.0, 120.0),
    (50, RECV, 12.0, 120, 120, 0, 100.0, 120.0),
]
# End of the hour: a fully unreachable minute, then a quiet one.
MINUTE_58: list[Row] = [(s, DOWN, _, _, _, _, _, _) for s in (0, 20, 40)]
MINUTE_59: list[Row] = [
    (0, OK, 2.4, 2, 2, 0, 98.0, 75.0),
    (20, OK, 3.0, 2, 2, 0, 98.0, 75.0),
    (40, OK, 2.7, 2, 2, 0, 98.0, 75.0),
]

ROLLUP_FIELDS = (
    "samples",
    "caught_up",
    "last_verdict",
    "lag_min",
    "lag_avg",
    "lag_max",
    "lag_last",
    "trx_behind_min",
    "trx_behind_avg",
    "trx_behind_max",
    "trx_behind_last",
    "not_received_avg",
    "not_received_max",
    "received_not_applied_avg",
    "received_not_applied_max",
    "apply_rate_avg",
    "source_rate_avg",
)


def expected(*values: Any) -> dict[str, Any]:
    """A rollup row in ROLLUP_FIELDS order (verdict codes as ints, as stored)."""
    return {
        k: int(v) if isinstance(v, Verdict) else v
        for k, v in zip(ROLLUP_FIELDS, values, strict=True)
    }


# Worked by hand from the tables above.
# 12:00: lags .5…3 → mean 10.5/6 = 1.75; trx 0…5 → 2.5; not_received 6/6 = 1; r_n_a 9/6 = 1.5;
#        apply 750/6 = 125.
MIN_0 = expected(6, 6, OK, 0.5, 1.75, 3.0, 3.0, 0, 2.5, 5, 5, 1.0, 2, 1.5, 3, 125.0, 130.0)
# 12:01: known lags 4, 6, 1, 1 → 12/4 = 3; "last" is the newest *known* (1.0 at :40, not the
#        NULL at :50); trx 120/4 = 30; apply 520/4 = 130; 3 caught-up polls, the last one OK.
MIN_1 = expected(6, 3, OK, 1.0, 3.0, 6.0, 1.0, 10, 30.0, 60, 10, 0.0, 0, 30.0, 60, 130.0, 130.0)
# 12:02: the three unreachable polls count as samples but not in any mean: lag 1.2/3 = .4,
#        apply 300/3 = 100.
MIN_2 = expected(6, 3, OK, 0.2, 0.4, 0.6, 0.6, 0, 0.0, 0, 0, 0.0, 0, 0.0, 0, 100.0, 100.0)
# 12:03 once complete: lags 2…12 → 42/6 = 7; trx 20…120 → 420/6 = 70.
MIN_3 = expected(
    6, 0, RECV, 2.0, 7.0, 12.0, 12.0, 20, 70.0, 120, 120, 70.0, 120, 0.0, 0, 100.0, 120.0
)
# 12:58: nothing known at all — every statistic NULL, the verdict kept.
MIN_58 = expected(3, 0, DOWN, _, _, _, _, _, _, _, _, _, _, _, _, _, _)
# 12:59: lags 2.4, 3.0, 2.7 → 8.1/3 = 2.7; last is 2.7 (time order, not the max).
MIN_59 = expected(3, 3, OK, 2.4, 2.7, 3.0, 2.7, 2, 2.0, 2, 2, 2.0, 2, 0.0, 0, 98.0, 75.0)
# Channel B: one poll in each of 12:01 and 12:02, the second while unreachable.
B_1 = expected(1, 0, APPLY, 9.0, 9.0, 9.0, 9.0, 9, 9.0, 9, 9, 0.0, 0, 9.0, 9, 1.0, 130.0)
B_2 = expected(1, 0, DOWN, _, _, _, _, _, _, _, _, _, _, _, _, _, _)

# Hour 12:00, merged from the six minute rows of A (30 samples). min/max/last are exact; each
# average is the minute averages weighted by the minute's *sample count* (the documented lean:
# a minute with NULL lags weighs as if all its polls had one), over the minutes where it is known
# (12:58 has none, so the weights sum to 27):
#   lag   (6·1.75 + 6·3 + 6·0.4 + 6·7 + 3·2.7) / 27 = 81 / 27   = 3
#   trx   (6·2.5  + 6·30 + 6·0 + 6·70 + 3·2)   / 27 = 621 / 27  = 23
#   n_r   (6·1    + 6·0  + 6·0 + 6·70 + 3·2)   / 27 = 432 / 27  = 16
#   r_n_a (6·1.5  + 6·30 + 6·0 + 6·0  + 3·0)   / 27 = 189 / 27  = 7
#   apply (6·125  + 6·130 + 6·100 + 6·100 + 3·98) / 27 = 3024 / 27 = 112
#   src   (6·130  + 6·130 + 6·100 + 6·120 + 3·75) / 27 = 3105 / 27 = 115
# caught_up 6 + 3 + 3 + 0 + 0 + 3 = 15; last verdict and last lag from 12:59.
HOUR_A = expected(
    30, 15, OK, 0.2, 3.0, 12.0, 2.7, 0, 23.0, 120, 2, 16.0, 120, 7.0, 60, 112.0, 115.0
)
# B: (1·9 + 0) / 1 for every known average; samples 2, last verdict DOWN (12:02).
HOUR_B = expected(2, 0, DOWN, 9.0, 9.0, 9.0, 9.0, 9, 9.0, 9, 9, 0.0, 0, 9.0, 9, 1.0, 130.0)


def sample_rows(channel_id: int, minute: int, rows: list[Row]) -> list[dict[str, Any]]:
    out = []
    for second, verdict, lag, trx, nr, rna, apply_rate, source_rate in rows:
        out.append(
            {
                "channel_id": channel_id,
                "ts": at(minute) + timedelta(microseconds=round(second * 1_000_000)),
                "verdict": int(verdict),
                "lag_s": lag,
                "seconds_behind_source": None if lag is None else int(lag),
                "trx_behind": trx,
                "not_received": nr,
                "received_not_applied": rna,
                "apply_rate": apply_rate,
                "source_rate": source_rate,
                "sql_running": verdict is not DOWN or None,
                "disagreement": False,
            }
        )
    return out


def add_samples(store: Store, rows: list[dict[str, Any]]) -> None:
    with store.sessions() as session, session.begin():
        session.execute(insert(Sample), rows)


def run_roll_up(store: Store, now: datetime) -> tuple[int, int]:
    with store.sessions() as session, session.begin():
        return roll_up(session, epoch(now))


def rollup_rows(
    store: Store, table: type[SampleRollup1m] | type[SampleRollup1h]
) -> dict[tuple[int, datetime], dict[str, Any]]:
    with store.sessions() as session:
        rows = session.scalars(select(table).order_by(table.channel_id, table.bucket))
        return {(r.channel_id, r.bucket): {f: getattr(r, f) for f in ROLLUP_FIELDS} for r in rows}


@pytest.fixture
def raw(rollup_store: Store) -> Store:
    """Channel A's first three minutes, half of the fourth, one sample just before 12:00, and B."""
    store = rollup_store
    a, b = store.channel_a, store.channel_b
    rows = [r for m, table in RAW_A.items() for r in sample_rows(a, m, table)]
    rows += sample_rows(a, 3, MINUTE_3_EARLY)
    # 1 µs before 12:00: outside both the 12:00 bucket and this run's window.
    rows += sample_rows(a, -1, [(59.999999, APPLY, 100.0, 1000, 0, 1000, 1.0, 130.0)])
    rows += sample_rows(b, 1, [(30, APPLY, 9.0, 9, 0, 9, 1.0, 130.0)])
    rows += sample_rows(b, 2, [(30, DOWN, _, _, _, _, _, _)])
    add_samples(store, rows)
    return store


def test_minute_rollup_matches_hand_figures(raw: Store) -> None:
    a, b = raw.channel_a, raw.channel_b
    # 12:03:25 → the last complete minute (less the 5 s grace) is 12:02; redo 12:00–12:02.
    written = run_roll_up(raw, at(3, 25))

    assert rollup_rows(raw, SampleRollup1m) == {
        (a, at(0)): MIN_0,
        (a, at(1)): MIN_1,
        (a, at(2)): MIN_2,
        (b, at(1)): B_1,
        (b, at(2)): B_2,
    }
    # Not 12:03 (still running) and not 11:59 (outside the three redone minutes).
    assert written == (5, 0)
    assert rollup_rows(raw, SampleRollup1h) == {}


def test_minute_rollup_is_idempotent(raw: Store) -> None:
    run_roll_up(raw, at(3, 25))
    first = rollup_rows(raw, SampleRollup1m)
    assert run_roll_up(raw, at(3, 25)) == (5, 0)
    assert rollup_rows(raw, SampleRollup1m) == first
    # Twice within one session too (a worker retrying inside its transaction).
    with raw.sessions() as session, session.begin():
        roll_up(session, epoch(at(3, 25)))
        roll_up(session, epoch(at(3, 25)))
    assert rollup_rows(raw, SampleRollup1m) == first


def test_running_minute_is_rolled_once_complete(raw: Store) -> None:
    a = raw.channel_a
    run_roll_up(raw, at(3, 25))
    add_samples(raw, sample_rows(a, 3, MINUTE_3_LATE))
    # 12:04:04 is still inside the grace period: 12:03 is not yet rolled.
    run_roll_up(raw, at(4, 4))
    assert (a, at(3)) not in rollup_rows(raw, SampleRollup1m)
    run_roll_up(raw, at(4, 5))
    rows = rollup_rows(raw, SampleRollup1m)
    assert rows[(a, at(3))] == MIN_3
    # 12:00 fell out of the redone window and was left alone.
    assert rows[(a, at(0))] == MIN_0


def test_hour_rollup_merges_minute_rows(raw: Store) -> None:
    a, b = raw.channel_a, raw.channel_b
    run_roll_up(raw, at(3, 25))
    add_samples(raw, sample_rows(a, 3, MINUTE_3_LATE))
    run_roll_up(raw, at(4, 5))
    add_samples(raw, sample_rows(a, 58, MINUTE_58) + sample_rows(a, 59, MINUTE_59))
    # Before the hour (plus grace) is over, no hour row.
    assert run_roll_up(raw, at(60, 4))[1] == 0
    assert rollup_rows(raw, SampleRollup1h) == {}

    # 13:00:05: minutes 12:57–12:59 from raw, then hours 11:00 and 12:00 from minutes.
    assert run_roll_up(raw, at(60, 5)) == (2, 2)
    minutes = rollup_rows(raw, SampleRollup1m)
    assert minutes[(a, at(58))] == MIN_58
    assert minutes[(a, at(59))] == MIN_59
    assert rollup_rows(raw, SampleRollup1h) == {(a, HOUR_12): HOUR_A, (b, HOUR_12): HOUR_B}

    # Idempotent: again, and again a few minutes later (same hours redone, same answer).
    run_roll_up(raw, at(60, 5))
    run_roll_up(raw, at(62, 30))
    assert rollup_rows(raw, SampleRollup1h) == {(a, HOUR_12): HOUR_A, (b, HOUR_12): HOUR_B}
    assert rollup_rows(raw, SampleRollup1m) == minutes


# ---------------------------------------------------------------------------------------------
# Retention
# ---------------------------------------------------------------------------------------------
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
RETENTION = Retention(raw_days=3, minute_days=60, hour_days=730)
RAW_CUT = NOW - timedelta(days=3)
MINUTE_CUT = NOW - timedelta(days=60)
HOUR_CUT = NOW - timedelta(days=730)
# The same instants in every table: 1 µs either side of each cutoff, the cutoff itself, now.
INSTANTS = [
    HOUR_CUT - timedelta(days=1),
    HOUR_CUT - MICRO,
    HOUR_CUT,
    HOUR_CUT + MICRO,
    MINUTE_CUT - MICRO,
    MINUTE_CUT,
    MINUTE_CUT + MICRO,
    RAW_CUT - MICRO,
    RAW_CUT,
    RAW_CUT + MICRO,
    NOW,
]


def _rollup_row(channel_id: int, bucket: datetime) -> dict[str, Any]:
    return {"channel_id": channel_id, "bucket": bucket, **MIN_59}


@pytest.fixture
def aged(store: Store) -> Store:
    a = store.channel_a
    with store.sessions() as session, session.begin():
        session.execute(
            insert(Sample), [{"channel_id": a, "ts": t, "verdict": 0} for t in INSTANTS]
        )
        session.execute(
            insert(InstanceSample),
            [{"instance_id": store.instance_id, "ts": t, "reachable": True} for t in INSTANTS],
        )
        session.execute(insert(SampleRollup1m), [_rollup_row(a, t) for t in INSTANTS])
        session.execute(insert(SampleRollup1h), [_rollup_row(a, t) for t in INSTANTS])
    return store


def _times(session: Session, column: Any) -> list[datetime]:
    return list(session.scalars(select(column).order_by(column)))


def test_retention_deletes_exactly_what_is_older_than_each_cutoff(aged: Store) -> None:
    with aged.sessions() as session, session.begin():
        deleted = enforce_retention(session, epoch(NOW), RETENTION)

    def kept(cutoff: datetime) -> list[datetime]:
        return [t for t in INSTANTS if t >= cutoff]

    # Raw tables keep RAW_CUT and after (3 of 11); 1-minute MINUTE_CUT on (6); 1-hour 9.
    assert deleted == {
        "samples": 8,
        "instance_samples": 8,
        "applier_worker_samples": 0,  # none in this store: test_api_workers ages those
        "samples_1m": 5,
        "samples_1h": 2,
        # No audit entries here: test_audit_trail ages those.
        "audit_events": 0,
        # No episodes or alert history here: test_history_retention ages those.
        "episodes": 0,
        "episode_causes": 0,
        "alert_delivery_attempts": 0,
        "alert_deliveries": 0,
        "alert_events": 0,
    }
    with aged.sessions() as session:
        assert _times(session, Sample.ts) == kept(RAW_CUT) == [RAW_CUT, RAW_CUT + MICRO, NOW]
        assert _times(session, InstanceSample.ts) == kept(RAW_CUT)
        assert _times(session, SampleRollup1m.bucket) == kept(MINUTE_CUT)
        assert len(kept(MINUTE_CUT)) == 6
        assert _times(session, SampleRollup1h.bucket) == kept(HOUR_CUT)
        assert len(kept(HOUR_CUT)) == 9
        # Only time-series rows go: the channel survives.
        assert session.scalar(select(func.count()).select_from(Channel)) == 2


def test_retention_twice_deletes_nothing_more(aged: Store) -> None:
    with aged.sessions() as session, session.begin():
        enforce_retention(session, epoch(NOW), RETENTION)
    with aged.sessions() as session, session.begin():
        again = enforce_retention(session, epoch(NOW), RETENTION)
    assert set(again.values()) == {0}


def _rollups_by_key(
    sessions: sessionmaker[Session], ids: tuple[int, int]
) -> dict[tuple[str, int, datetime], dict[str, Any]]:
    found = {}
    with sessions() as session:
        for table in (SampleRollup1m, SampleRollup1h):
            for row in session.scalars(select(table)):
                key = (table.__tablename__, ids.index(row.channel_id), row.bucket)
                found[key] = {
                    c.key: getattr(row, c.key)
                    for c in table.__table__.columns
                    if c.key not in ("channel_id", "bucket")
                }
    return found


def test_sql_and_python_rollups_agree_on_random_samples(
    tmp_path: Path, postgres: ThrowawayPostgres
) -> None:
    """The same raw samples (random, a quarter of each figure unknown) rolled up by Python on
    SQLite and by PostgreSQL itself: the same rows, every column, to within one rounding step
    of an average (the last stored digit, 0.001)."""
    rng = random.Random(20261205)
    channels = 2
    rows_by_channel: list[list[dict[str, Any]]] = [[] for _ in range(channels)]
    for k in range(channels):
        t = HOUR_12 - timedelta(minutes=3)
        while t < HOUR_12 + timedelta(minutes=65):
            t += timedelta(seconds=rng.uniform(0.3, 2.5))

            def maybe(value: Any) -> Any:
                return None if rng.random() < 0.25 else value

            rows_by_channel[k].append(
                {
                    "ts": t,
                    "verdict": rng.choice([0, 0, 1, 2, 6]),
                    "lag_s": maybe(round(rng.uniform(0, 60), 3)),
                    "trx_behind": maybe(rng.randrange(0, 5000)),
                    "not_received": maybe(rng.randrange(0, 100)),
                    "received_not_applied": maybe(rng.randrange(0, 5000)),
                    "apply_rate": maybe(round(rng.uniform(0, 3000), 3)),
                    "source_rate": maybe(round(rng.uniform(0, 3000), 3)),
                    "timeline_lag_s": maybe(round(rng.uniform(0, 60), 3)),
                }
            )
    results = []
    url = postgres.new_database("agree")
    upgrade(url)
    engine = make_engine(url)
    with contextlib.ExitStack() as stack:
        stack.callback(engine.dispose)
        for sessions in (stack.enter_context(sqlite_store(tmp_path)), make_session_factory(engine)):
            store = _cluster(sessions)
            ids = (store.channel_a, store.channel_b)
            add_samples(
                store,
                [
                    {"channel_id": ids[k], **row}
                    for k in range(channels)
                    for row in rows_by_channel[k]
                ],
            )
            # Every minute of the span and the hour: one run a minute, as the job runs.
            for minute in range(66):
                run_roll_up(store, HOUR_12 + timedelta(minutes=minute, seconds=5))
            results.append(_rollups_by_key(sessions, ids))
    python, sql = results
    assert python.keys() == sql.keys()
    # The hours 11:00 (from 11:57) and 12:00 of each channel.
    assert sum(1 for key in python if key[0] == "samples_1h") == 2 * channels
    for key, row in python.items():
        for column, value in row.items():
            other = sql[key][column]
            if column.endswith("_avg") and value is not None and other is not None:
                assert abs(value - other) <= 0.0010001, (key, column, value, other)
            else:
                assert value == other, (key, column, value, other)
