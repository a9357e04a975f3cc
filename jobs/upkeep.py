"""The jobs that look after the archive rather than fill it: a backup (`retrieval.upkeep.backup`) and an index rebuilt
from the catalog (`ingest.rebuild`). Both run as jobs, in `serve`'s worker when it holds the embedded index (so no
ingest job writes meanwhile, and the chat goes on), else in the command's process. Where a rebuilt index is made and
how it takes the old one's place is the index's own code (`retrieval.vectors.place.IndexPlace`)."""

from __future__ import annotations

from pathlib import Path

from ingest.rebuild import RebuildError, rebuild_index
from ingest.report import Summary
from jobs.arguments import BackupArguments, RebuildArguments
from jobs.context import JobContext, JobIncomplete, Progress
from retrieval.upkeep.backup import BackupError, Sources, write_backup


def run_backup(ctx: JobContext, args: BackupArguments, summary: Summary, progress: Progress) -> str:
    """One archive of the catalog, the index, the files and the settings (`retrieval.upkeep.backup`); in `serve`'s
    worker it runs between other jobs, so no ingest writes while the index is read."""
    destination = Path(args.destination)
    sources = Sources(ctx.writer.catalog.engine, ctx.writer.index, ctx.backups.folders, ctx.backups.settings)
    try:
        manifest = write_backup(destination, sources, progress)
    except BackupError as exc:
        raise JobIncomplete(str(exc)) from exc
    return backup_note(destination, manifest)


def backup_note(where: Path, manifest: dict) -> str:
    """What an archive holds, in a line or two."""
    database, tables = manifest["database"], manifest["database"]["counts"]
    rows = ", ".join(f"{tables.get(t, 0):,} {t}" for t in ("papers", "researchers", "accounts", "threads", "steps"))
    files = ", ".join(f"{n:,} {name}" for name, n in manifest["files"].items())
    line = f"{where}: {rows}; {manifest['index']['points']:,} index points; files: {files}"
    return line + (f"\nthe {database['kind']} database is {database['note']}" if "note" in database else "")


def run_rebuild(ctx: JobContext, args: RebuildArguments, summary: Summary, progress: Progress | None) -> str:
    """A new index from the catalog, the uploads and the old index's passages (`ingest.rebuild`), made beside the
    old one. The embedded index then takes its place, in this process too (the server goes on answering from it);
    with a Qdrant server it is a new collection the settings are then pointed at."""
    place = ctx.place
    new = place.beside()
    try:
        written = rebuild_index(ctx.writer.into(new), ctx.uploads, ctx.writer.index, summary, progress)
    except BaseException as exc:  # nothing of the half-made index stays open or on disk; the one in use is untouched
        place.discard(new)
        if isinstance(exc, RebuildError):
            raise JobIncomplete(f"{exc}; the index in use is unchanged") from exc
        raise
    counts = ", ".join(f"{n:,} {kind}s" for kind, n in written.items() if kind != "dropped")
    where = place.adopt(ctx.writer.index, new, args.grace)
    if place.url:
        return (f"rebuilt into the collection {where}: {counts}. Set SCHOLARLOOM_COLLECTION={where} and restart; "
                f"delete {place.collection} once satisfied")  # fmt: skip
    return f"index rebuilt: {counts}; now in {where}"
