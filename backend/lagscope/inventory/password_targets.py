"""Where a stored password may go: only to the address and user it was entered for, and never
under weaker TLS, other CAs or another pinned key than the instance's.

An editor who could move an instance, or lower its protection, while keeping its stored password
could harvest it (a server asking for mysql_clear_password receives it in clear). So a move or a
weaker protection needs the password again in the same request, and a connection test uses the
stored one only for the instance's own target.
"""

from __future__ import annotations

from typing import Any

from lagscope.collectors.connection import (
    TLS_MODES,
    check_public_key_setting,
    check_tls_setting,
)
from lagscope.errors import InvalidInput
from lagscope.models import Instance

# Where a stored password is sent: changing one of these is changing who receives it.
TARGET_FIELDS = ("host", "port", "user")


def stored_password_refusal(
    instance: Instance,
    host: str,
    port: int,
    user: str,
    tls: str,
    tls_ca_path: str | None,
    server_public_key_path: str | None = None,
) -> str | None:
    """Why a connection test of ``host:port`` as ``user`` may not log in with ``instance``'s
    stored password (None: it may). Pure; the rule :func:`update_instance` applies to edits:
    the stored password goes only to the address and user it was entered for, exactly (no
    name resolution: "localhost" is not "127.0.0.1"), and, when there is one, never under
    weaker TLS, other CAs or another pinned public key than the instance's."""
    moved = [
        field
        for field, value in zip(TARGET_FIELDS, (host, port, user), strict=True)
        if value != getattr(instance, field)
    ]
    if moved:
        return (
            f"{', '.join(moved)} differ from instance {instance.id}'s: the stored password is "
            "only used for the instance's own address and user; retype it to test another"
        )
    if instance.password_enc:
        if TLS_MODES.index(tls) < TLS_MODES.index(instance.tls):
            return (
                f"tls {tls} is weaker than instance {instance.id}'s {instance.tls}: the stored "
                "password is only used for the instance's own address and user, under its own "
                "TLS; retype it to test this"
            )
        if (tls_ca_path or None) != instance.tls_ca_path:
            return (
                f"tls_ca_path differs from instance {instance.id}'s: the stored password is only "
                "used for the instance's own address and user, under its own TLS; retype it to "
                "test this"
            )
        key = server_public_key_path or None
        # None only refuses more (no key at all is used): that cannot leak the password.
        if key is not None and key != instance.server_public_key_path:
            return (
                f"server_public_key_path differs from instance {instance.id}'s: the stored "
                "password is only encrypted with the instance's own pinned key; retype it to "
                "test this"
            )
    return None


def check_move(instance: Instance, changes: dict[str, Any]) -> list[str]:
    """The target fields an edit changes (host, port, user); refused without the password."""
    moved = [f for f in TARGET_FIELDS if f in changes and changes[f] != getattr(instance, f)]
    if moved and "password" not in changes:
        # Keeping the stored password would send it to whatever the new address is: an editor
        # could harvest it (a server asking for mysql_clear_password receives it in clear).
        raise InvalidInput(
            f"changing {', '.join(moved)} needs the password again in the same request "
            '(the stored one is never sent to a new target); give "password": "" for none'
        )
    return moved


def apply_tls(instance: Instance, changes: dict[str, Any], ca_dir: str | None) -> bool:
    """Set ``tls``/``tls_ca_path``/``server_public_key_path`` from a PATCH (``""`` removes a
    path).

    Weakening the mode, trusting other CAs or pinning another key changes who can pass for
    the server (or read the password): like a move, it needs the password in the same
    request. Returns whether any of the three changed.
    """
    tls = changes.get("tls", instance.tls)
    ca_path = changes.get("tls_ca_path", instance.tls_ca_path) or None
    key_path = changes.get("server_public_key_path", instance.server_public_key_path) or None
    # A path stored before LAGSCOPE_TLS_CA_DIR was set (or changed) is the operator's to
    # move; it must not block renaming or disabling the instance.
    check_tls_setting(tls, ca_path, ca_dir if "tls_ca_path" in changes else None)
    check_public_key_setting(tls, key_path, ca_dir if "server_public_key_path" in changes else None)
    weaker = TLS_MODES.index(tls) < TLS_MODES.index(instance.tls)
    # Removing the path counts too: the system CAs trust far more issuers than a private CA.
    other_ca = ca_path != instance.tls_ca_path
    # Another pinned key is another recipient of the password, like another CA. (Removing the
    # pin only makes Lagscope refuse more: that needs no password.)
    other_key = key_path is not None and key_path != instance.server_public_key_path
    if (weaker or other_ca or other_key) and "password" not in changes and instance.password_enc:
        what = (
            f"lowering tls to {tls}"
            if weaker
            else "changing tls_ca_path"
            if other_ca
            else "changing server_public_key_path"
        )
        raise InvalidInput(
            f"{what} needs the password again in the same request (the stored one is "
            'never sent under weaker protection); give "password": "" for none'
        )
    changed = (tls, ca_path, key_path) != (
        instance.tls,
        instance.tls_ca_path,
        instance.server_public_key_path,
    )
    instance.tls = tls
    instance.tls_ca_path = ca_path
    instance.server_public_key_path = key_path
    return changed
