"""`scholarloom settings reference`: the settings reference page (`docs/settings.md`) written from the settings."""

from __future__ import annotations

import typer

from scholarloom.cli.common import app

settings_app = typer.Typer(help="The settings ScholarLoom reads.", no_args_is_help=True)
app.add_typer(settings_app, name="settings")


@settings_app.command("reference")
def reference_command() -> None:
    """Print the settings reference as markdown (`scholarloom settings reference > docs/settings.md`)."""
    from scholarloom.settings_doc import reference

    typer.echo(reference(), nl=False)
