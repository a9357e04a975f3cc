"""`scholarloom db upgrade`, `db current`, `db revision` (the schema's revisions, `retrieval/upkeep/schema.py`) and
`db recount` (the catalog's kept counts), and
`backup`, `restore` (`retrieval/upkeep/backup.py`), `index rebuild` (`ingest/rebuild.py`) and `index convert` (how
the index keeps its vectors, `retrieval/vectors/store.py` `VectorLayout`)."""

from __future__ import annotations

from contextlib import closing, contextmanager
from pathlib import Path

import typer

from scholarloom.cli.common import app, fail, load_settings, progress

db_app = typer.Typer(help="The database's schema (Alembic revisions).", no_args_is_help=True)
app.add_typer(db_app, name="db")


def model_metadata() -> list:
    """Every table the models define: SQLModel's metadata once every module of `retrieval` and `auth` is imported
    (walked, so a new module with a table needs no list updated), and Chainlit's history tables."""
    import importlib
    import pkgutil

    from sqlmodel import SQLModel

    import auth
    import retrieval
    from chatui.tables import metadata as chat_metadata

    for package in (retrieval, auth):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not module.name.startswith("retrieval.upkeep.migrations"):  # Alembic's scripts run only inside Alembic
                importlib.import_module(module.name)
    return [SQLModel.metadata, chat_metadata]


@contextmanager
def _database():
    """The settings' database alone (no index, no models), disposed of afterwards."""
    from retrieval.upkeep.database import make_engine

    settings = load_settings()
    if settings.catalog_url.startswith("sqlite:///"):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.catalog_url)
    try:
        yield engine
    finally:
        engine.dispose()


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Bring the database to the newest revision (`serve` also does it at start; two processes never at once)."""
    from retrieval.upkeep.schema import migrate

    with _database() as engine:
        before = migrate(engine)
    if before.at_head:
        typer.echo(f"the database is at the newest revision ({before.head})")
    else:
        typer.echo(f"upgraded the database from {before.current or 'no revision'} to {before.head}")


@db_app.command("current")
def db_current() -> None:
    """Print the database's revision and the newest one this version knows."""
    from retrieval.upkeep.schema import revision

    with _database() as engine:
        where = revision(engine)
    state = "up to date" if where.at_head else "run `scholarloom db upgrade`"
    typer.echo(f"database revision: {where.current or 'none'}; newest: {where.head} ({state})")


@db_app.command("recount")
def db_recount() -> None:
    """Count the catalog again from its rows: every researcher's and institution's papers, the totals and the papers
    per category that pages read (`retrieval/scholarly/counts.py`). They are kept as the catalog is written; this is
    for rows written around ScholarLoom (a bulk load in SQL, a hand repair). About a minute per million papers."""
    import time

    settings = load_settings()
    started = time.perf_counter()
    try:
        catalog = settings.catalog()
        catalog.recount()
        counts = catalog.counts()
    finally:
        settings.close()
    typer.echo(f"counted {counts['papers']:,} papers, {counts['researchers']:,} researchers and "
               f"{counts['authorships']:,} authorships in {time.perf_counter() - started:.1f} s")  # fmt: skip


@db_app.command("revision")
def db_revision(message: str = typer.Argument(..., help="What the revision changes, in a few words.")) -> None:
    """For developers: write a new revision from what the models say and the database at the newest revision
    lacks (Alembic's autogenerate); read and adjust it, then commit it with the model change."""
    from retrieval.upkeep.schema import new_revision

    with _database() as engine:
        path = new_revision(engine, model_metadata(), message)
    typer.echo(f"wrote {path}")


@app.command()
def backup(
    destination: Path = typer.Argument(..., help="The archive to write (a .tar file; never overwritten)."),
    detach: bool = typer.Option(False, help="With a server running: queue the job and return at once."),
) -> None:
    """One archive of the catalog (with accounts and chat history), every index point, the chat's and uploads'
    files and the settings without secrets, with a manifest of counts and checksums. With `serve` running it runs
    there as a job, between the others, so nothing is ingested while it reads (the chat goes on)."""
    from jobs.arguments import BackupArguments, JobKind
    from scholarloom.cli.run import execute

    execute(JobKind.BACKUP, BackupArguments(str(destination.resolve())), detach)


@app.command("restore")
def restore_command(
    source: Path = typer.Argument(..., exists=True, dir_okay=False, help="An archive `backup` wrote."),
) -> None:
    """Restore an archive into an empty data directory (SCHOLARLOOM_DATA_DIR): every member is checked against
    the manifest first; then the database, the files and the index points, and the counts compared."""
    from retrieval.upkeep.backup import BackupError, Targets, restore, table_counts

    with closing(load_settings()) as settings:
        data_dir = settings.data_dir
        if data_dir.exists() and any(p.name != "models" for p in data_dir.iterdir()):
            fail(f"{data_dir} is not empty: restore into a new data directory (set SCHOLARLOOM_DATA_DIR)")
        data_dir.mkdir(parents=True, exist_ok=True)
        database = None if settings.database_url else data_dir / "scholarloom.db"
        targets = Targets(database, settings.index, settings.backup_folders())
        try:
            with progress() as bars:
                manifest = restore(source, targets, data_dir, bars)
        except BackupError as exc:
            fail(str(exc))
        restored = table_counts(settings.catalog().engine)  # opening it also brings an older schema up to date
        points = settings.index().count()
    wanted = manifest["database"]["counts"]
    differ = {t: (n, restored.get(t)) for t, n in wanted.items() if restored.get(t) != n}
    if points != manifest["index"]["points"] or differ:
        fail(f"restored counts differ from the archive's: index {points} of {manifest['index']['points']}; {differ}")
    typer.echo(f"restored {source} ({manifest['created']}) into {data_dir}: "
               f"{wanted.get('papers', 0):,} papers, {points:,} index points, "
               f"{sum(manifest['files'].values()):,} files; every count matches the archive's")  # fmt: skip


index_app = typer.Typer(help="The vector index.", no_args_is_help=True)
app.add_typer(index_app, name="index")


@index_app.command("rebuild")
def index_rebuild(detach: bool = typer.Option(False, help="With a server running: queue the job and return.")) -> None:
    """Compute the index again: every paper's points from the catalog, every full-text passage from its stored text,
    uploads from their rows, with the models and index format of this version. Built beside the index in use, which
    keeps answering until the new one replaces it (with `serve` running: as its job, without a restart). With a
    Qdrant server: a new collection, named at the end, for SCHOLARLOOM_COLLECTION."""
    from jobs.arguments import JobKind, RebuildArguments
    from scholarloom.cli.run import execute

    execute(JobKind.REBUILD, RebuildArguments(), detach)


@index_app.command("convert")
def index_convert(
    to: str = typer.Option(None, "--to", help="int8 or float32; default SCHOLARLOOM_INDEX_VECTORS (int8)."),
) -> None:
    """Keep the index's dense vectors as int8 copies in memory with the float32 originals on disk (a quarter of the
    memory; searches rescore with the originals), or all as float32 in memory. Nothing is embedded again: the
    vectors and payloads stay, the embedded engine makes (or drops) the int8 copies in about a minute per million
    points. Stop `serve` first (the embedded index has one writer); a Qdrant server converts in the background."""
    import time

    from retrieval.vectors.store import IndexUnavailable, VectorLayout

    settings = load_settings()
    asked = to or settings.index_vectors
    if asked not in set(VectorLayout):
        fail(f"--to must be int8 or float32, not {to!r}")
    wanted = VectorLayout(asked)
    try:
        index = settings.index()
    except IndexUnavailable as exc:
        fail(f"{exc}; stop it first, then convert")
    was, started = index.layout, time.perf_counter()
    try:
        if was == wanted:
            typer.echo(f"the index already keeps its vectors as {wanted}; nothing to do")
            return
        index.convert(wanted)
        points = index.count()
    except IndexUnavailable as exc:
        fail(str(exc))
    finally:
        settings.close()
    typer.echo(f"converted the index ({points:,} points) from {was} to {wanted} in "
               f"{time.perf_counter() - started:.1f} s")  # fmt: skip
