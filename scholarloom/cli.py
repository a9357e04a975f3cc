"""The `scholarloom` command: ingest, serve, users, models."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import typer

app = typer.Typer(help="ScholarLoom: chat with research papers.", no_args_is_help=True, add_completion=False)
ingest_app = typer.Typer(help="Fill the catalog and the index.", no_args_is_help=True)
users_app = typer.Typer(help="Manage user accounts.", no_args_is_help=True)
models_app = typer.Typer(help="Prepare the embedding models (offline).", no_args_is_help=True)
app.add_typer(ingest_app, name="ingest")
app.add_typer(users_app, name="users")
app.add_typer(models_app, name="models")


def _settings():
    from scholarloom.settings import Settings

    return Settings()


def _fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(1)


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log more.")) -> None:
    # litellm otherwise fetches a model cost map from the internet when it is first imported.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )


@ingest_app.command("demo")
def ingest_demo(
    source: Path = typer.Option(None, help="Folder of the demo corpus (default: the bundled data/demo)."),
) -> None:
    """Load the bundled demo corpus into the catalog and the index (idempotent)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ingest.demo import DEMO_DIR, load_demo
    from retrieval.index import IndexUnavailable

    settings = _settings()
    try:
        index = settings.index()
    except IndexUnavailable as exc:
        _fail(f"{exc}\nIs `scholarloom serve` running? The embedded index can only be open in one process.")
    root = source or DEMO_DIR
    if not root.is_dir():
        _fail(f"no demo corpus at {root}")
    columns = (TextColumn("{task.description:<44}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=False) as progress:
        summary = load_demo(settings.catalog(), index, settings.embedder(), root, progress)
    failures = summary.write_failures(settings.data_dir / "ingest-failures.jsonl")
    typer.echo(f"demo corpus: {summary.line()}")
    if summary.failures:
        typer.echo(f"{len(summary.failures)} records were skipped; reasons in {failures}")
    counts = settings.catalog().counts()
    typer.echo("catalog: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"; index points {index.count()}")
    settings.close()


@app.command()
def serve(
    host: str = typer.Option(None, help="Address to listen on (default SCHOLARLOOM_HOST)."),
    port: int = typer.Option(None, help="Port to listen on (default SCHOLARLOOM_PORT)."),
) -> None:
    """Start the web app: pages, API and the chat at /chat."""
    import uvicorn

    from scholarloom.app import create_app

    settings = _settings()
    if host:
        settings.host = host
    if port:
        settings.port = port
    try:
        settings.require_secret()
        application = create_app(settings)
    except RuntimeError as exc:
        _fail(str(exc))
    mode = f"LLM {settings.llm}" if settings.llm else "retrieval-only mode (set SCHOLARLOOM_LLM for written answers)"
    typer.echo(f"ScholarLoom on http://{settings.host}:{settings.port} ({mode})")
    uvicorn.run(application, host=settings.host, port=settings.port, log_level="warning")


@users_app.command("add")
def users_add(
    name: str = typer.Argument(..., help="User name (letters, digits, . _ @ -)."),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="Read the password from standard input."),
    replace: bool = typer.Option(False, "--replace", help="Set a new password if the user exists."),
) -> None:
    """Create a user who can sign in to the chat."""
    from auth.accounts import AccountError, add_user, create_tables

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    settings = _settings()
    engine = settings.catalog().engine
    create_tables(engine)
    try:
        add_user(engine, name, password, replace=replace)
    except AccountError as exc:
        _fail(str(exc))
    typer.echo(f"user {name} is ready")


@models_app.command("prepare")
def models_prepare() -> None:
    """Build the ONNX embedding model from the installed weights package (no network)."""
    from retrieval.embeddings import prepare_models

    dense, sparse = prepare_models(_settings().models_dir)
    typer.echo(f"dense model: {dense}\nBM25: {sparse}")


if __name__ == "__main__":  # pragma: no cover
    app()
