"""`scholarloom db upgrade`, `db current` and `db revision`: the database's schema revision (`retrieval/schema.py`)."""

from __future__ import annotations

import typer

from scholarloom.cli.common import app, load_settings

db_app = typer.Typer(help="The database's schema (Alembic revisions).", no_args_is_help=True)
app.add_typer(db_app, name="db")


def _engine(settings):
    from retrieval.engine import make_engine

    if settings.catalog_url.startswith("sqlite:///"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    return make_engine(settings.catalog_url)


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Bring the database to the newest revision (`serve` also does it at start; two processes never at once)."""
    from retrieval.schema import migrate

    engine = _engine(load_settings())
    try:
        before = migrate(engine)
    finally:
        engine.dispose()
    if before.at_head:
        typer.echo(f"the database is at the newest revision ({before.head})")
    else:
        typer.echo(f"upgraded the database from {before.current or 'no revision'} to {before.head}")


@db_app.command("current")
def db_current() -> None:
    """Print the database's revision and the newest one this version knows."""
    from retrieval.schema import revision

    engine = _engine(load_settings())
    try:
        where = revision(engine)
    finally:
        engine.dispose()
    state = "up to date" if where.at_head else "run `scholarloom db upgrade`"
    typer.echo(f"database revision: {where.current or 'none'}; newest: {where.head} ({state})")


@db_app.command("revision")
def db_revision(message: str = typer.Argument(..., help="What the revision changes, in a few words.")) -> None:
    """For developers: write a new revision from what the models say and the database at the newest revision
    lacks (Alembic's autogenerate); read and adjust it, then commit it with the model change."""
    from sqlmodel import SQLModel

    import auth.follows  # noqa: F401  (every model registered with SQLModel)
    import auth.models  # noqa: F401
    import retrieval.jobs  # noqa: F401
    import retrieval.models  # noqa: F401
    import retrieval.uploads  # noqa: F401
    from chatui.tables import metadata as chat_metadata
    from retrieval.schema import new_revision

    engine = _engine(load_settings())
    try:
        path = new_revision(engine, [SQLModel.metadata, chat_metadata], message)
    finally:
        engine.dispose()
    typer.echo(f"wrote {path}")
