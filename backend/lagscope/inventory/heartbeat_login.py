"""The heartbeat writer's login: its password goes only to the source it was entered for.

The writer logs in to the cluster's *source*, so the source's address is where the heartbeat
password is sent. An editor who could change that address and keep the password would collect
it (delete the source, add one of their own: the writer logs in there, a server asking for
``mysql_clear_password`` reads it in clear). So the password is stored with its target
(``Cluster.heartbeat_password_target``: the source instance's id, host, port, TLS and pinned
public key when the password was entered), and:

- every inventory change that can touch the source (an instance added, edited, deleted) calls
  :func:`follow_source`, which drops the password, saying why, when the source is another
  instance, at another address, or under weaker TLS or other CAs (a stronger TLS setting is
  followed); the writer then skips the cluster until the password is entered again;
- the writer itself (:func:`refusal`, read by ingest/heartbeat.py before every start)
  compares the target with the current source again, so a path that changed the source
  without :func:`follow_source` (a script, a hand edit of the store) still sends nothing.

A password entered while the cluster has no source (the cluster form comes before its
instances) is bound to the first source added.

Refused logins back off as the pollers' do (inventory/server_logins.py, same delays, same give-up),
with the state on the cluster row: any writer process, or a restarted one, honours it.
Entering the heartbeat password again clears it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from lagscope.collectors.connection import TLS_MODES
from lagscope.inventory import server_logins as logins
from lagscope.models import Cluster, Instance
from lagscope.security.secret_box import SecretBox

RETRY = "the heartbeat password is entered again"


def source_of(cluster: Cluster) -> Instance | None:
    return next((i for i in cluster.instances if i.role == "source"), None)


def target_of(source: Instance | None) -> dict[str, Any] | None:
    """Where the writer's login goes now: the source's identity, address and TLS."""
    if source is None:
        return None
    return {
        "instance_id": source.id,
        "host": source.host,
        "port": source.port,
        "tls": source.tls,
        "tls_ca_path": source.tls_ca_path,
        "server_public_key_path": source.server_public_key_path,
    }


def _at(target: dict[str, Any]) -> str:
    return f"instance {target['instance_id']} at {target['host']}:{target['port']}"


def mismatch(bound: dict[str, Any] | None, target: dict[str, Any] | None) -> str | None:
    """Why a password entered for ``bound`` may not go to ``target`` (None: it may)."""
    if target is None:
        return "the cluster has no source any more" if bound else "the cluster has no source"
    if bound is None:
        return "it was entered before the cluster had a source, and not bound to one"
    if bound["instance_id"] != target["instance_id"]:
        return f"it was entered for source {_at(bound)}; the source is now {_at(target)}"
    if (bound["host"], bound["port"]) != (target["host"], target["port"]):
        return (
            f"the source moved from {bound['host']}:{bound['port']} "
            f"to {target['host']}:{target['port']}"
        )
    if TLS_MODES.index(target["tls"]) < TLS_MODES.index(bound["tls"]):
        return f"the source's tls was lowered from {bound['tls']} to {target['tls']}"
    if target["tls_ca_path"] != bound["tls_ca_path"]:
        return "the source's tls_ca_path changed"
    pin = target.get("server_public_key_path")
    if pin and pin != bound.get("server_public_key_path"):
        # Another pinned key lets whoever holds its private half read the password (a pin
        # removed only makes the writer refuse more, as a stronger TLS setting does).
        return "the source's pinned server public key changed"
    return None


def enter(box: SecretBox, cluster: Cluster, password: str) -> None:
    """Store a new heartbeat password for the cluster's current source (or its first one)."""
    cluster.heartbeat_password_enc = box.encrypt(password)
    cluster.heartbeat_password_target = target_of(source_of(cluster))
    cluster.heartbeat_password_cleared = None
    reset(cluster)


def follow_source(cluster: Cluster) -> None:
    """After a change to the cluster's instances: bind a password that waits for a source,
    follow a stronger TLS setting, drop the password when its target is gone."""
    if cluster.heartbeat_password_enc is None:
        return
    bound, target = cluster.heartbeat_password_target, target_of(source_of(cluster))
    if bound is None:
        cluster.heartbeat_password_target = target  # the first source (or still none)
        return
    why = mismatch(bound, target)
    if why is None:
        cluster.heartbeat_password_target = target
        return
    cluster.heartbeat_password_enc = None
    cluster.heartbeat_password_target = None
    cluster.heartbeat_password_cleared = f"{why} ({datetime.now(UTC):%Y-%m-%d %H:%M} UTC)"
    reset(cluster)


def refusal(cluster: Cluster, now: datetime) -> str | None:
    """Why no heartbeat writer runs for this cluster now (None: one does, or none is meant to)."""
    if cluster.heartbeat_mode != "lagscope" or not cluster.enabled:
        return None
    if not cluster.heartbeat_user:
        return "no heartbeat user is set"
    if cluster.heartbeat_password_enc is None:
        if cluster.heartbeat_password_cleared:
            return (
                f"the heartbeat password was cleared: {cluster.heartbeat_password_cleared}; "
                "enter it again"
            )
        return "no heartbeat password is stored"
    target = target_of(source_of(cluster))
    if cluster.heartbeat_password_target is None and target is None:
        return "the cluster has no source to write the heartbeat to"
    if why := mismatch(cluster.heartbeat_password_target, target):
        return f"the heartbeat password is not sent: {why}; enter it again"
    if cluster.heartbeat_login_state == logins.ACCESS_DENIED:
        failures = cluster.heartbeat_login_failures
        if cluster.heartbeat_next_attempt_at is None:
            return f"the source's heartbeat {logins.gave_up(failures, RETRY)}"
        if now < cluster.heartbeat_next_attempt_at:
            return (
                f"the source refused the heartbeat login {failures} time(s) in a row; "
                f"next attempt at {cluster.heartbeat_next_attempt_at.isoformat()}"
            )
    return None


def note_refused(cluster: Cluster, at: datetime, backoff: logins.Backoff) -> None:
    cluster.heartbeat_login_failures += 1
    cluster.heartbeat_login_state = logins.ACCESS_DENIED
    if cluster.heartbeat_login_failures >= backoff.give_up_after:
        cluster.heartbeat_next_attempt_at = None
    else:
        delay = timedelta(seconds=backoff.delay_s(cluster.heartbeat_login_failures))
        cluster.heartbeat_next_attempt_at = at + delay


def note_ok(cluster: Cluster) -> None:
    cluster.heartbeat_login_state = logins.OK
    cluster.heartbeat_login_failures, cluster.heartbeat_next_attempt_at = 0, None


def reset(cluster: Cluster) -> None:
    cluster.heartbeat_login_state = None
    cluster.heartbeat_login_failures, cluster.heartbeat_next_attempt_at = 0, None
