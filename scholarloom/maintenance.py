"""The jobs that look after the archive rather than fill it: a backup (`retrieval.backup`) and an index rebuilt
from the catalog (`ingest.rebuild`). Both run as jobs, in `serve`'s worker when it holds the embedded index (so no
ingest job writes meanwhile, and the chat goes on), else in the command's process."""

from __future__ import annotations

import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from ingest.report import Summary

# A rebuilt embedded index replaces the old one in the running server; searches that started on the old one get
# this long to finish before it is closed.
SWAP_GRACE_SECONDS = 2.0


def run_backup(ctx, args: dict, summary: Summary, progress) -> str:
    """One archive of the catalog, the index, the files and the settings (`retrieval.backup`); in `serve`'s worker
    it runs between other jobs, so no ingest writes while the index is read."""
    from retrieval.backup import BackupError, Sources, write_backup
    from scholarloom.jobs import JobIncomplete

    s, destination = ctx.settings, Path(args["destination"])
    try:
        manifest = write_backup(destination, Sources(ctx.catalog.engine, ctx.index, s.backup_folders(),
                                                     s.without_secrets()), progress)  # fmt: skip
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


def run_rebuild(ctx, args: dict, summary: Summary, progress) -> str:
    """A new index from the catalog, the uploads and the old index's passages (`ingest.rebuild`), made beside the
    old one. The embedded index then takes its place, in this process too (the server goes on answering from it);
    with a Qdrant server it is a new collection the settings are then pointed at."""
    from ingest.rebuild import RebuildError, rebuild_index
    from retrieval.index import Index, edge_folder, point_edge_folder
    from retrieval.store_edge import EdgeStore
    from scholarloom.jobs import JobIncomplete

    s, stamp = ctx.settings, datetime.now(timezone.utc).strftime("%Y%m%d%H%M%S")
    if s.qdrant_url:
        name = f"{s.collection}-{stamp}"
        api_key = s.qdrant_api_key.get_secret_value() if s.qdrant_api_key else None
        new = Index.open(name, url=s.qdrant_url, api_key=api_key)
    else:
        old_folder = edge_folder(s.index_dir, s.collection)
        for left in old_folder.parent.glob(f"{s.collection}.2*"):  # an earlier rebuild cut off before its swap
            if left.is_dir() and left != old_folder and left.name.removeprefix(f"{s.collection}.").isdigit():
                shutil.rmtree(left, ignore_errors=True)
        new = Index(EdgeStore(old_folder.with_name(f"{s.collection}.{stamp}")))
    try:
        written = rebuild_index(ctx.catalog, s.uploads(), ctx.index, new, ctx.embedder, summary, progress)
    except BaseException as exc:  # nothing of the half-made index stays open or on disk; the one in use is untouched
        new.close()
        if not s.qdrant_url:
            shutil.rmtree(new.store.path, ignore_errors=True)
        if isinstance(exc, RebuildError):
            raise JobIncomplete(f"{exc}; the index in use is unchanged") from exc
        raise
    counts = ", ".join(f"{n:,} {kind}s" for kind, n in written.items() if kind != "dropped")
    if s.qdrant_url:
        new.close()
        return (f"rebuilt into the collection {name}: {counts}. Set SCHOLARLOOM_COLLECTION={name} and restart; "
                f"delete {s.collection} once satisfied")  # fmt: skip
    point_edge_folder(s.index_dir, s.collection, new.store.path)
    old = ctx.index.swap(new.store)
    time.sleep(args.get("grace", SWAP_GRACE_SECONDS))
    old.close()
    shutil.rmtree(old_folder, ignore_errors=True)
    return f"index rebuilt: {counts}; now in {new.store.path}"
