"""What every command shares: the Typer apps, the settings, failing with a message, the closing line, progress."""

from __future__ import annotations

import logging
import os

import typer

app = typer.Typer(help="ScholarLoom: chat with research papers.", no_args_is_help=True, add_completion=False)
ingest_app = typer.Typer(help="Fill the catalog and the index.", no_args_is_help=True)
users_app = typer.Typer(help="Manage user accounts.", no_args_is_help=True)
models_app = typer.Typer(help="Prepare the embedding models (offline).", no_args_is_help=True)
bench_app = typer.Typer(help="Measure retrieval quality.", no_args_is_help=True)
app.add_typer(ingest_app, name="ingest")
app.add_typer(bench_app, name="bench")
app.add_typer(users_app, name="users")
app.add_typer(models_app, name="models")


def load_settings():
    """The settings, read from the environment once per command; close them when done (`with closing(...)`)."""
    from scholarloom.settings import Settings

    return Settings()


def fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(1)


def report(settings, summary, line: str, things: str) -> None:
    """The run's closing line; skipped items go to the failures file the user can read."""
    failures = summary.write_failures(settings.data_dir / "ingest-failures.jsonl")
    typer.echo(line)
    if summary.failures:
        typer.echo(f"{len(summary.failures)} {things} were skipped; reasons in {failures}")


def progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        """How fast the bar moves (its unit per second), once there is a rate to show."""

        def render(self, task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.1f}/s" if speed else "", style="progress.data.speed")

    columns = (TextColumn("{task.description:<44}"), BarColumn(), MofNCompleteColumn(), Rate(), TimeRemainingColumn())
    return Progress(*columns, transient=False)


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log more.")) -> None:
    # litellm otherwise fetches a model cost map from the internet when it is first imported.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # What any command writes (the database, the index, uploads, backups, chat files) is its user's alone.
    os.umask(0o077)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
