"""The ``user`` and ``check-token`` groups: accounts and their API tokens, and the tokens a lag
check (a load balancer's probe) is asked with, managed from the host without the web UI.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from lagscope.cli.root import _fail, main
from lagscope.errors import LagscopeError, NotFound


@main.group()
def user() -> None:
    """Manage API users."""


@user.command("create")
@click.option("--username", required=True)
@click.option(
    "--role", type=click.Choice(["viewer", "editor", "admin"]), default="viewer", show_default=True
)
@click.option(
    "--password",
    envvar="LAGSCOPE_NEW_USER_PASSWORD",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="Prompted when not given (or set LAGSCOPE_NEW_USER_PASSWORD).",
)
def create_user_command(username: str, role: str, password: str) -> None:
    """Create a user (the first admin, typically)."""
    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory
    from lagscope.security.users import create_user

    sessions = make_session_factory(make_engine(get_settings().database_url))
    try:
        with sessions() as session, session.begin():
            created = create_user(session, username, password, role)
            click.echo(
                json.dumps({"id": created.id, "username": created.username, "role": created.role})
            )
    except LagscopeError as exc:
        _fail(exc)


def _user_sessions() -> Any:
    from lagscope.config import get_settings
    from lagscope.db import make_engine, make_session_factory

    return make_session_factory(make_engine(get_settings().database_url))


def _user_id(session: Any, username: str) -> int:
    from lagscope.security.users import find_user

    found = find_user(session, username)
    if found is None:
        raise NotFound(f"no user {username!r}")
    return found.id


def _user_change(username: str, change: Callable[[Any, int], object]) -> None:
    try:
        with _user_sessions()() as session, session.begin():
            user = change(session, _user_id(session, username))
            if user is not None:
                click.echo(json.dumps(_user_json(user)))
    except LagscopeError as exc:
        _fail(exc)


def _user_json(user: Any) -> dict[str, object]:
    return {"id": user.id, "username": user.username, "role": user.role, "disabled": user.disabled}


@user.command("list")
def list_users_command() -> None:
    """Every user, one JSON object a line."""
    from sqlalchemy import select

    from lagscope.models import User

    with _user_sessions()() as session:
        for found in session.scalars(select(User).order_by(User.id)):
            click.echo(json.dumps(_user_json(found)))


@user.command("disable")
@click.argument("username")
def disable_user_command(username: str) -> None:
    """Refuse the user's logins and revoke every token they hold, at once."""
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_disabled(s, uid, True))


@user.command("enable")
@click.argument("username")
def enable_user_command(username: str) -> None:
    """Allow the user's logins again (the tokens revoked when disabled stay revoked)."""
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_disabled(s, uid, False))


@user.command("delete")
@click.argument("username")
def delete_user_command(username: str) -> None:
    """Delete the user and every token they hold."""
    from lagscope.security import access

    _user_change(username, access.delete_user)


@user.command("set-role")
@click.argument("username")
@click.argument("role", type=click.Choice(["viewer", "editor", "admin"]))
def set_role_command(username: str, role: str) -> None:
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_role(s, uid, role))


@user.command("set-password")
@click.argument("username")
@click.option(
    "--password",
    envvar="LAGSCOPE_NEW_USER_PASSWORD",
    prompt=True,
    hide_input=True,
    confirmation_prompt=True,
    help="Prompted when not given (or set LAGSCOPE_NEW_USER_PASSWORD).",
)
def set_password_command(username: str, password: str) -> None:
    """A new password; every token the user holds is revoked."""
    from lagscope.security import access

    _user_change(username, lambda s, uid: access.set_password(s, uid, password))


@user.command("tokens")
@click.argument("username")
def tokens_command(username: str) -> None:
    """The user's tokens (never the secrets), one JSON object a line."""
    from sqlalchemy import select

    from lagscope.models import ApiToken

    try:
        with _user_sessions()() as session:
            uid = _user_id(session, username)
            for token in session.scalars(select(ApiToken).where(ApiToken.user_id == uid)):
                click.echo(
                    json.dumps(
                        {
                            "id": token.id,
                            "name": token.name,
                            "kind": token.kind,
                            "expires_at": token.expires_at.isoformat()
                            if token.expires_at
                            else None,
                        }
                    )
                )
    except LagscopeError as exc:
        _fail(exc)


@user.command("revoke-token")
@click.argument("token_id", type=int)
def revoke_token_command(token_id: int) -> None:
    """Revoke one token by id (see `lagscope user tokens`)."""
    from lagscope.models import ApiToken

    with _user_sessions()() as session, session.begin():
        token = session.get(ApiToken, token_id)
        if token is None:
            _fail(NotFound(f"token {token_id} not found"))
        session.delete(token)
    click.echo(json.dumps({"revoked": token_id}))


@main.group("check-token")
def check_token_group() -> None:
    """Read-only tokens for the lag check routes (proxies, throttlers), each for some clusters."""


def _check_token_json(info: Any) -> dict[str, object]:
    return {
        "id": info.id,
        "name": info.name,
        "clusters": info.clusters,
        "created_by": info.created_by,
        "created_at": info.created_at.isoformat(),
        "last_used_at": info.last_used_at.isoformat() if info.last_used_at else None,
    }


@check_token_group.command("create")
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    required=True,
    help="A cluster the token may ask about (its name, or id); repeat for more.",
)
@click.option("--name", default="check", show_default=True, help="What the token is for.")
def create_check_token_command(clusters: tuple[str, ...], name: str) -> None:
    """Make a check token and print it, with its clusters, as JSON: it is shown only now."""
    from lagscope.api.schemas.common import printable
    from lagscope.security import check_tokens

    try:
        name = printable(name.strip())[:128] or "check"
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--name") from None
    try:
        with _user_sessions()() as session, session.begin():
            info, token = check_tokens.create_check_token(session, name, list(clusters), "cli")
            click.echo(json.dumps({**_check_token_json(info), "token": token}))
    except LagscopeError as exc:
        _fail(exc)


@check_token_group.command("list")
def list_check_tokens_command() -> None:
    """Every check token (never the token itself), one JSON object a line."""
    from lagscope.security import check_tokens

    with _user_sessions()() as session:
        for info in check_tokens.list_check_tokens(session):
            click.echo(json.dumps(_check_token_json(info)))


@check_token_group.command("revoke")
@click.argument("token_id", type=int)
def revoke_check_token_command(token_id: int) -> None:
    """Revoke a check token by id (see `lagscope check-token list`): its next check gets 401."""
    from lagscope.security import check_tokens

    try:
        with _user_sessions()() as session, session.begin():
            check_tokens.revoke_check_token(session, token_id)
    except LagscopeError as exc:
        _fail(exc)
    click.echo(json.dumps({"revoked": token_id}))
