"""`scholarloom doctor`."""

from __future__ import annotations

import json
from contextlib import closing

import typer

from scholarloom.cli.common import app, load_settings

MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}


@app.command()
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON (for scripts)."),
    sources: bool = typer.Option(False, "--sources", help="Also check that arXiv, OpenAlex and Semantic Scholar "
                                                           "answer (needs the network)."),  # fmt: skip
) -> None:
    """Check what the chosen mode needs (settings, database, index, models, the LLM) and say what is wrong. Exit 0
    only when nothing needed fails."""
    from scholarloom.doctor import FAIL, Check, run_checks

    try:
        settings = load_settings()
    except Exception as exc:  # invalid settings: say which, and stop there
        checks = [Check("settings", FAIL, f"the settings cannot be read: {str(exc).splitlines()[0][:300]}")]
    else:
        with closing(settings):
            checks = run_checks(settings, sources)
    if as_json:
        typer.echo(json.dumps([c.to_dict() for c in checks], indent=1))
    else:
        for check in checks:
            typer.echo(f"{MARKS[check.status]} {check.area:<9} {check.detail}")
    raise typer.Exit(1 if any(c.status == FAIL for c in checks) else 0)
