"""What servers say stays private, and odd bytes in it never cost a sample: the real pipeline on
the lab, storing into PostgreSQL (the compose default, and the store that refuses NUL).

A session on replica1 holds row locks the applier needs and, meanwhile, runs a statement whose
literals are a customer's data (an e-mail address, a card number); once with a raw NUL byte in
it. The pipeline keeps statements' full text (``LAGSCOPE_KEEP_STATEMENT_TEXT=1``) so that the
full text, NUL included, reaches the store and the editor's view:

- the lag and the cause are recorded every poll while the lock is held (PostgreSQL took the
  NUL: it was made visible before the store);
- a viewer reads digests only (``SELECT SLEEP(?), ?, ?``) from ``/clusters/{id}/causes`` and
  ``/episodes/{id}``; an editor also gets the full text;
- a webhook body quotes no server text unless its target opted in, and even then only the
  digest the sentence holds;
- a note with ``\\u0000`` is stored (cleaned), not a 500.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pymysql
import pytest
from sqlalchemy import select

from lagscope.alerts import rules as alert_rules
from lagscope.alerts import targets as alert_targets
from lagscope.models import Channel, Instance, User
from lagscope.models.alerts import AlertRule
from lagscope.models.episodes import Episode, EpisodeCause
from lagscope.security import users
from lagscope.security.secret_box import store_box

from .api_stack import ApiServer
from .pipeline_stack import SECRET, Pipeline, start_pipeline
from .postgres import ThrowawayPostgres
from .receiver import Receiver, receiver
from .waiting import wait_until

pytestmark = pytest.mark.integration

SCHEMA, TABLE = "lab_privacy", "lab_privacy.accounts"
EMAIL, CARD = "alice@example.com", "4111-1111-1111-1111"
PRIVATE = (EMAIL, CARD, "4111", "alice")
ENV = {
    "LAGSCOPE_KEEP_STATEMENT_TEXT": "1",
    "LAGSCOPE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    "LAGSCOPE_WEBHOOK_BACKOFF_BASE_S": "1",
    "LAGSCOPE_DELIVERY_SWEEP_EVERY_S": "2",
}


@pytest.fixture(scope="module")
def pipeline(lab, postgres: ThrowawayPostgres, tmp_path_factory) -> Iterator[Pipeline]:
    _create_table(lab)
    workdir = tmp_path_factory.mktemp("server-text-pipeline")
    with start_pipeline(lab, workdir, extra_env=ENV, store_url=postgres.url) as started:
        yield started


@pytest.fixture(scope="module")
def api_store(pipeline: Pipeline) -> str:
    return pipeline.url


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with receiver() as started:
        yield started


def _source(lab, sql: str) -> None:
    conn = lab.connect("source")
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
    finally:
        conn.close()


def _create_table(lab) -> None:
    _source(lab, f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    _source(lab, f"DROP TABLE IF EXISTS {TABLE}")
    _source(lab, f"CREATE TABLE {TABLE} (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB")
    rows = ", ".join(f"({i}, 0)" for i in range(1, 21))
    _source(lab, f"INSERT INTO {TABLE} VALUES {rows}")
    lab.wait_caught_up(timeout_s=60)


@dataclass(frozen=True)
class Hold:
    session_id: int
    began: datetime


def _processlist_info(lab, session_id: int) -> str | None:
    conn = lab.connect("replica1")
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = %s", (session_id,)
            )
            row = cur.fetchone()
        return None if row is None or row[0] is None else str(row[0])
    finally:
        conn.close()


@contextmanager
def blocking(lab, statement: str) -> Iterator[Hold]:
    """A session on replica1 holding row locks the applier then needs, while it runs
    ``statement`` (a long SLEEP); released (killed, rolled back) on leaving."""
    holder = lab.connect("replica1")
    with holder.cursor() as cur:
        cur.execute("SELECT CONNECTION_ID()")
        session_id = int(cur.fetchone()[0])
        cur.execute("START TRANSACTION")
        cur.execute(f"SELECT id FROM {TABLE} WHERE id <= 10 FOR UPDATE")
        cur.fetchall()

    def run() -> None:
        try:
            with holder.cursor() as cur:
                cur.execute(statement)
                cur.fetchall()
        except pymysql.err.MySQLError:
            pass  # killed on leaving

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_until(
        lambda: (_processlist_info(lab, session_id) or "").startswith("SELECT SLEEP"),
        timeout_s=10,
        message="the blocking session runs its statement",
    )
    began = datetime.now(UTC)
    _source(lab, f"UPDATE {TABLE} SET n = n + 1 WHERE id <= 10")
    try:
        yield Hold(session_id, began)
    finally:
        killer = lab.connect("replica1")
        try:
            with killer.cursor() as cur:
                cur.execute(f"KILL QUERY {session_id}")
        finally:
            killer.close()
        thread.join(timeout=30)
        try:
            holder.rollback()
        finally:
            holder.close()
        lab.wait_caught_up(timeout_s=120)


def _current(pipe: Pipeline, instance: str = "replica1") -> list[dict[str, Any]]:
    with pipe.session() as s:
        channel = s.scalar(
            select(Channel).join(Instance).where(Instance.name == instance, Channel.name == "")
        )
        return list(channel.current_causes or []) if channel is not None else []


def _blocked_by(pipe: Pipeline, session_id: int) -> dict[str, Any] | None:
    for cause in _current(pipe):
        evidence = cause.get("evidence") or {}
        if (
            cause.get("cause") == "blocked_by_session"
            and evidence.get("blocker_thread_id") == session_id
        ):
            return cause
    return None


def _episode_id(pipe: Pipeline, session_id: int) -> int:
    """The episode whose cause segment names the session: a segment's evidence is saved at
    most every 10 s (ingest/episodes.py), so it may take that long to show."""
    return wait_until(
        lambda: _episode_naming(pipe, session_id),
        timeout_s=40,
        message="a cause segment naming the blocking session",
    )


def _episode_naming(pipe: Pipeline, session_id: int) -> int | None:
    with pipe.session() as s:
        rows = s.execute(
            select(EpisodeCause.episode_id, EpisodeCause.evidence)
            .join(Episode, Episode.id == EpisodeCause.episode_id)
            .order_by(EpisodeCause.id.desc())
        ).all()
    for episode_id, evidence in rows:
        if (evidence or {}).get("blocker_thread_id") == session_id:
            return int(episode_id)
    return None


def _token(api: ApiServer, username: str, role: str) -> str:
    with api.sessions() as session, session.begin():
        found = session.scalar(select(User).where(User.username == username))
        user = found or users.create_user(session, username, "a-long-password", role)
        return users.issue_token(session, user, "t", kind="session")


def _no_private(text: str) -> None:
    for secret in PRIVATE:
        assert secret not in text, f"{secret!r} shown: {text[:2000]}"


PRIVATE_STATEMENT = f"SELECT SLEEP(600), '{EMAIL}' AS email, '{CARD}' AS card"
DIGEST = "SELECT SLEEP(?), ? AS email, ? AS card"


def _rule(pipe: Pipeline, name: str, target_ids: list[int]) -> int:
    with pipe.session() as s, s.begin():
        replica1 = s.scalar(select(Instance.id).where(Instance.name == "replica1"))
        rule = alert_rules.create_rule(
            s,
            {
                "name": name,
                "metric": "lag",
                "threshold": 1.0,
                "for_s": 0.0,
                "instance_id": replica1,
                "target_ids": target_ids,
            },
        )
        return rule.id


def _delivered(pipe: Pipeline, hook: Receiver, rule_id: int, paths: set[str]) -> dict[str, str]:
    """The bodies the rule's firing notification brought to ``paths`` (the rule is switched off
    afterwards, so it sends nothing more)."""
    try:
        wait_until(
            lambda: {r.path for r in hook.accepted()} >= paths,
            timeout_s=90,
            message=f"the firing notification delivered to {sorted(paths)}",
        )
    finally:
        with pipe.session() as s, s.begin():
            s.get_one(AlertRule, rule_id).enabled = False
    return {r.path: r.body.decode() for r in hook.accepted() if r.path in paths}


@pytest.fixture(scope="class")
def hold(lab, pipeline: Pipeline) -> Iterator[Hold]:
    """One blocking session for the class below: its statement's literals are an e-mail
    address and a card number."""
    with blocking(lab, PRIVATE_STATEMENT) as held:
        wait_until(
            lambda: _blocked_by(pipeline, held.session_id),
            timeout_s=60,
            message="the blocking session named as the cause",
        )
        yield held


class TestAStatementWithACustomersData:
    def test_the_stored_cause_holds_the_digest(self, pipeline: Pipeline, hold: Hold) -> None:
        cause = _blocked_by(pipeline, hold.session_id)
        assert cause is not None
        assert cause["evidence"]["blocker_statement"] == DIGEST
        _no_private(cause["sentence"])
        assert f"“{DIGEST}”" in cause["sentence"]

    def test_a_viewer_reads_digests_an_editor_the_full_text(
        self, pipeline: Pipeline, api: ApiServer, hold: Hold
    ) -> None:
        episode_id = _episode_id(pipeline, hold.session_id)
        paths = (f"/api/v1/clusters/{pipeline.cluster_id}/causes", f"/api/v1/episodes/{episode_id}")
        with api.client(_token(api, "vera", "viewer")) as viewer:
            for path in paths:
                r = viewer.get(path)
                assert r.status_code == 200, r.text
                assert "blocked_by_session" in r.text
                _no_private(r.text)
                assert DIGEST in r.text
                assert "blocker_statement_text" not in r.text
        with api.client(_token(api, "eddie", "editor")) as editor:
            full = editor.get(paths[1]).json()
        texts = [c["evidence"].get("blocker_statement_text") for c in full["causes"]]
        assert PRIVATE_STATEMENT in texts

    def test_webhook_bodies_quote_no_server_text_unless_the_target_opts_in(
        self, pipeline: Pipeline, hook: Receiver, hold: Hold
    ) -> None:
        box = store_box(pipeline.sessions, SECRET)
        with pipeline.session() as s, s.begin():
            ids = [
                alert_targets.create_target(
                    s, box, ["127.0.0.1"], kind, kind, f"{hook.url}/{kind}", None
                ).id
                for kind in ("generic", "slack")
            ]
        bodies = _delivered(
            pipeline, hook, _rule(pipeline, "replica1 blocked", ids), {"/generic", "/slack"}
        )
        why = json.loads(bodies["/generic"])["why"]
        assert any(w["cause"] == "blocked_by_session" for w in why), why
        for body in bodies.values():
            _no_private(body)
            assert "SLEEP" not in body, body
            assert "statement “…”" in body
        with pipeline.session() as s, s.begin():
            opted = alert_targets.create_target(
                s,
                box,
                ["127.0.0.1"],
                "opted",
                "generic",
                f"{hook.url}/opted",
                None,
                include_statements=True,
            ).id
        bodies = _delivered(pipeline, hook, _rule(pipeline, "opted in", [opted]), {"/opted"})
        _no_private(bodies["/opted"])
        sentences = [w["sentence"] for w in json.loads(bodies["/opted"])["why"]]
        assert any(f"“{DIGEST}”" in sentence for sentence in sentences), sentences


def test_a_nul_byte_in_a_blocking_statement_costs_no_sample(
    lab, pipeline: Pipeline, api: ApiServer
) -> None:
    statement = f"SELECT SLEEP(600), 'al\x00ice' AS who, '{CARD}' AS card"
    with blocking(lab, statement) as hold:
        assert "\x00" in (_processlist_info(lab, hold.session_id) or "")
        wait_until(
            lambda: _blocked_by(pipeline, hold.session_id),
            timeout_s=60,
            message="the blocking session named as the cause",
        )
        named_at = datetime.now(UTC)
        # Every poll while the lock is held records the lag (PostgreSQL took the tick: the NUL
        # was made visible first) and keeps naming the blocker.
        answered = wait_until(
            lambda: (
                (found := pipeline.answered("replica1", named_at)) and len(found) >= 8 and found
            ),
            timeout_s=60,
            message="8 answered polls of replica1 while the NUL statement blocks it",
        )
        lags = [s.lag_s for s in answered]
        assert all(lag is not None for lag in lags), lags
        assert lags[-1] > lags[0], lags  # still blocked: the lag grows
        assert _blocked_by(pipeline, hold.session_id) is not None
        episode_id = _episode_id(pipeline, hold.session_id)
        with api.client(_token(api, "eddie", "editor")) as editor:
            r = editor.get(f"/api/v1/episodes/{episode_id}")
        assert r.status_code == 200, r.text
        texts = [c["evidence"].get("blocker_statement_text") or "" for c in r.json()["causes"]]
        assert any("al\ufffdice" in t for t in texts), texts
        assert all("\x00" not in t for t in texts)


def test_a_note_with_a_nul_is_stored_cleaned_on_postgresql(
    pipeline: Pipeline, api: ApiServer
) -> None:
    with api.client() as client:
        r = client.post(
            "/api/v1/annotations",
            json={
                "cluster_id": pipeline.cluster_id,
                "starts_at": datetime.now(UTC).isoformat(),
                "text": "failover drill\u0000 <b>done</b> \u202eevil",
            },
        )
    assert r.status_code == 201, r.text
    assert r.json()["text"] == "failover drill\ufffd <b>done</b> ⟨U+202E⟩evil"


def test_the_pipeline_stores_into_postgresql(
    pipeline: Pipeline, postgres: ThrowawayPostgres
) -> None:
    assert pipeline.url == postgres.url and pipeline.url.startswith("postgresql")
