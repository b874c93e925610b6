"""The ``secrets`` group: a new key for the stored secrets, and the rotation that re-encrypts every
value under the current key (with a dry run that only checks every value decrypts).
"""

from __future__ import annotations

import json
import sys

import click

from lagscope.cli.root import _fail, main
from lagscope.cli.users import _user_sessions
from lagscope.errors import LagscopeError


@main.group("secrets")
def secrets_group() -> None:
    """Stored credentials and the secret key."""


@secrets_group.command("generate-key")
def generate_key_command() -> None:
    """Print a new random key for LAGSCOPE_SECRET_KEY (32 random bytes, URL-safe base64)."""
    from lagscope.config import generate_key

    click.echo(generate_key())


@secrets_group.command("rotate")
@click.option("--dry-run", is_flag=True, help="Check every value decrypts; change nothing.")
def rotate_command(dry_run: bool) -> None:
    """Re-encrypt every stored credential under LAGSCOPE_SECRET_KEY, in one transaction.

    Values are read with LAGSCOPE_SECRET_KEY or LAGSCOPE_OLD_SECRET_KEYS; if any decrypts with
    none of them, nothing is changed and each is named (exit status 2). Prints the counts.
    """
    from lagscope.config import get_settings
    from lagscope.security.key_rotation import RotationRefused, rotate_credentials
    from lagscope.security.secret_box import SecretBox, ensure_salt

    settings = get_settings()
    try:
        with _user_sessions()() as session, session.begin():
            box = SecretBox(settings.secret_key, lambda: ensure_salt(session), settings.old_keys())
            report = rotate_credentials(session, box, dry_run)
    except RotationRefused as exc:
        error = {"error": "RotationRefused", "message": str(exc), "unreadable": exc.unreadable}
        click.echo(json.dumps(error), err=True)
        sys.exit(2)
    except LagscopeError as exc:
        _fail(exc)
    click.echo(
        json.dumps(
            {
                "dry_run": report.dry_run,
                "rotated": dict(report.rotated),
                "decrypted_with": dict(report.decrypted_with),
            }
        )
    )
