"""The commands that change the store directly: ``migrate`` (the schema), ``import`` (an inventory
file, with a dry run) and ``annotate`` (a note on a cluster's timeline, through the API so it is
audited there).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from lagscope.cli.root import _epoch_ms, main
from lagscope.cli.users import _user_sessions
from lagscope.errors import LagscopeError


@main.command()
@click.argument("text")
@click.option("--cluster", required=True, help="The cluster's name (or id).")
@click.option("--instance", default=None, help="One server of the cluster, by name.")
@click.option("--tag", "tags", multiple=True, help="A tag, e.g. --tag deploy (repeatable).")
@click.option("--at", default=None, help="ISO 8601 time with offset (default: now).")
@click.option("--until", default=None, help="The end of a range (ISO 8601 with offset).")
@click.option(
    "--url",
    envvar="LAGSCOPE_URL",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="Lagscope's base URL (or LAGSCOPE_URL).",
)
@click.option(
    "--token",
    envvar="LAGSCOPE_TOKEN",
    required=True,
    help="An editor's API token (or LAGSCOPE_TOKEN).",
)
def annotate(
    text: str,
    cluster: str,
    instance: str | None,
    tags: tuple[str, ...],
    at: str | None,
    until: str | None,
    url: str,
    token: str,
) -> None:
    """Put a note on a cluster's timeline (a deploy, a tuning step) through the API.

    It posts Grafana's annotation body to /api/v1/annotations/grafana, the endpoint deploy
    tools that post to Grafana can use as they are. Prints the API's answer as JSON."""
    import httpx

    body: dict[str, object] = {
        "text": text,
        "tags": [*tags, *([f"instance:{instance}"] if instance else [])],
    }
    if (start := _epoch_ms(at, "--at")) is not None:
        body["time"] = start
    if (end := _epoch_ms(until, "--until")) is not None:
        body["timeEnd"] = end
    try:
        response = httpx.post(
            f"{url.rstrip('/')}/api/v1/annotations/grafana",
            params={"cluster": cluster},
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=10.0,
        )
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach Lagscope at {url}: {exc}") from exc
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        raise click.ClickException(f"refused ({response.status_code}): {detail}")
    click.echo(json.dumps(response.json()))


@main.command()
@click.option("--url", default=None, help="Database URL (default: LAGSCOPE_DATABASE_URL).")
def migrate(url: str | None) -> None:
    """Upgrade the store schema to the newest migration."""
    from lagscope.store_setup import upgrade

    upgrade(url)


@main.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
def import_command(file: Path, dry_run: bool) -> None:
    """Make the store's clusters and instances match FILE (YAML or JSON), in one transaction.

    Idempotent: only differences are written, and a second run says "0 created, 0 changed".
    Nothing is deleted. The whole file is validated first (errors name the path and line);
    any refusal writes nothing. Works on the store (LAGSCOPE_DATABASE_URL) with
    LAGSCOPE_SECRET_KEY and LAGSCOPE_ALLOWED_TARGETS, like the API (docs/operations.md)."""
    from lagscope.api.schemas.import_file import plans_from
    from lagscope.config import get_settings
    from lagscope.inventory import import_document
    from lagscope.inventory.import_file import apply_plans
    from lagscope.security.secret_box import SecretBox, ensure_salt

    try:
        settings = get_settings()
        plans = plans_from(import_document.load(file), settings.password_file_dir)
        with _user_sessions()() as session:
            box = SecretBox(settings.secret_key, lambda: ensure_salt(session), settings.old_keys())
            try:
                report = apply_plans(
                    session, box, plans, settings.allow_list(), settings.tls_ca_dir
                )
            finally:
                if dry_run:
                    session.rollback()
            session.commit()  # after a dry run's rollback: nothing left to write
    except LagscopeError as exc:
        click.echo(f"lagscope import: {exc}", err=True)
        sys.exit(2)
    for change in report.changes:
        click.echo(change.line())
    click.echo(report.summary() + (" (dry run: nothing written)" if dry_run else ""))
