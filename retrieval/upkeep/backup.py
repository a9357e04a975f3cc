"""One archive of what a data directory holds and cannot fetch again: the catalog's database (with the accounts and
the chat history), every point of the vector index, the chat's and the uploads' files, and the settings that are
not secrets, with a manifest of counts and SHA-256 checksums.

The archive is a plain tar file: `manifest.json` first, then `catalog.sqlite` (SQLite's online backup API: a
consistent copy while others write; on PostgreSQL nothing, the manifest says to use `pg_dump`),
`index/points-N.jsonl.gz` (each point's id, dense and sparse vectors and payload, read through the store: the
embedded engine or a Qdrant server alike), `files/<folder>/...` and `settings.json`. It is written beside its
destination and renamed into place when complete, so a cut-off backup never looks like a good one.

`restore` takes an archive into an empty data directory: it checks every member against the manifest before
anything is written (names, sizes, checksums; nothing outside the data directory), then places the database and the
files and loads the points into a new index.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

import numpy as np
from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine

from retrieval.vectors.embeddings import SparseVector
from retrieval.vectors.store import StoredPoint

FORMAT = 1
MANIFEST = "manifest.json"
DATABASE = "catalog.sqlite"
CHUNK = 2000  # points a file of the index holds


class BackupError(RuntimeError):
    """The archive cannot be written or restored as asked; nothing was left half-done."""


@dataclass(frozen=True)
class Sources:
    """What a backup reads: the catalog's engine, the index, named folders of files, non-secret settings."""

    engine: Engine
    index: object  # retrieval.vectors.index.Index
    folders: dict[str, Path]
    settings: dict = field(default_factory=dict)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def table_counts(engine: Engine) -> dict[str, int]:
    """Rows in every table of the database (Alembic's own aside)."""
    with engine.connect() as connection:
        names = sorted(set(inspect(connection).get_table_names()) - {"alembic_version"})
        return {name: connection.execute(text(f'SELECT COUNT(*) FROM "{name}"')).scalar_one() for name in names}


def _copy_database(engine: Engine, staging: Path) -> dict:
    from retrieval.upkeep.schema import revision

    schema = revision(engine).current
    if engine.dialect.name != "sqlite":
        note = "not in this archive: back the database up with pg_dump (and restore it with pg_restore)"
        return {"kind": engine.dialect.name, "schema": schema, "counts": table_counts(engine), "note": note}
    with sqlite3.connect(engine.url.database) as source, sqlite3.connect(staging / DATABASE) as copy:
        source.backup(copy)  # one consistent snapshot, however much the app writes meanwhile
    from retrieval.upkeep.database import make_engine

    copied = make_engine(f"sqlite:///{staging / DATABASE}")
    try:
        counts = table_counts(copied)
    finally:
        copied.dispose()
    return {"kind": "sqlite", "schema": schema, "counts": counts}


def _encode(point: StoredPoint) -> dict:
    dense = None if point.dense is None else base64.b64encode(np.asarray(point.dense, "<f4").tobytes()).decode()
    sparse = None if point.sparse is None else [list(point.sparse.indices), list(point.sparse.values)]
    return {"id": point.id, "dense": dense, "sparse": sparse, "payload": point.payload}


def _decode(row: dict) -> StoredPoint:
    dense = None if row["dense"] is None else np.frombuffer(base64.b64decode(row["dense"]), "<f4").copy()
    sparse = None if row["sparse"] is None else SparseVector(*row["sparse"])
    return StoredPoint(row["id"], dense, sparse, row["payload"])


def _copy_index(index, staging: Path, progress) -> dict:
    total = index.count()
    task = progress.add_task("backup: index points", total=total) if progress else None
    folder, kinds, files, written = staging / "index", {}, 0, 0
    folder.mkdir()
    for chunk in index.points(CHUNK):
        with gzip.open(folder / f"points-{files:05d}.jsonl.gz", "wt", encoding="utf-8") as out:
            for point in chunk:
                out.write(json.dumps(_encode(point), ensure_ascii=False) + "\n")
                kind = point.payload.get("kind", "?")
                kinds[kind] = kinds.get(kind, 0) + 1
        files, written = files + 1, written + len(chunk)
        if task is not None:
            progress.advance(task, len(chunk))
    return {"points": written, "kinds": kinds}


def _copy_folders(folders: dict[str, Path], staging: Path) -> dict[str, int]:
    copied = {}
    for name, source in folders.items():
        target = staging / "files" / name
        paths = sorted(p for p in source.rglob("*") if p.is_file() and not p.is_symlink()) if source.is_dir() else []
        for path in paths:
            (target / path.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / path.relative_to(source))
        copied[name] = len(paths)
    return copied


def write_backup(destination: Path, sources: Sources, progress=None) -> dict:
    """Write the archive at `destination` (refused when something is there); returns its manifest."""
    destination = destination.resolve()
    if destination.exists():
        raise BackupError(f"{destination} exists: a backup never overwrites a file")
    if not destination.parent.is_dir():
        raise BackupError(f"the folder {destination.parent} does not exist")
    with tempfile.TemporaryDirectory(dir=destination.parent, prefix=f".{destination.name}.") as scratch:
        staging = Path(scratch) / "staging"
        staging.mkdir()
        database = _copy_database(sources.engine, staging)  # the catalog first: every point belongs to a paper in it
        index = _copy_index(sources.index, staging, progress)
        folders = _copy_folders(sources.folders, staging)
        (staging / "settings.json").write_text(json.dumps(sources.settings, indent=2, sort_keys=True, default=str))
        members = sorted(str(p.relative_to(staging).as_posix()) for p in staging.rglob("*") if p.is_file())
        manifest = {
            "format": FORMAT,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "database": database,
            "index": index,
            "files": folders,
            "members": {m: {"bytes": (staging / m).stat().st_size, "sha256": _sha256(staging / m)} for m in members},
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        partial = Path(scratch) / "archive.tar"
        # Readable by its owner alone (it holds password hashes, chat history, feed keys and every private upload);
        # made so before a byte is written, whatever the process's umask.
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as private, \
                tarfile.open(fileobj=private, mode="w") as archive:  # fmt: skip
            for member in [MANIFEST, *members]:
                archive.add(staging / member, arcname=member, recursive=False)
        os.replace(partial, destination)
    return manifest


def read_manifest(source: Path) -> dict:
    with tarfile.open(source) as archive:
        member = archive.extractfile(MANIFEST) if MANIFEST in archive.getnames() else None
        if member is None:
            raise BackupError(f"{source} is not a ScholarLoom backup (no {MANIFEST})")
        manifest = json.loads(member.read())
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source} has backup format {manifest.get('format')}; this version reads {FORMAT}")
    return manifest


def _checked_members(archive: tarfile.TarFile, manifest: dict) -> list[tarfile.TarInfo]:
    """Every member, each a regular file the manifest names with its size; anything else ends the restore."""
    expected = manifest["members"]
    members = [m for m in archive.getmembers() if m.name != MANIFEST]
    for member in members:
        path = PurePosixPath(member.name)
        if not member.isfile() or path.is_absolute() or ".." in path.parts or member.name not in expected:
            raise BackupError(f"the archive holds {member.name!r}, which its manifest does not list as a file")
        if member.size != expected[member.name]["bytes"]:
            said = expected[member.name]["bytes"]
            raise BackupError(f"{member.name} is {member.size} bytes; the manifest says {said}")
    missing = set(expected) - {m.name for m in members}
    if missing:
        raise BackupError(f"the archive lacks {', '.join(sorted(missing)[:5])}")
    return members


def unpack(source: Path, scratch: Path) -> dict:
    """Check and extract the archive into `scratch`; returns its manifest. Every checksum is verified."""
    manifest = read_manifest(source)
    with tarfile.open(source) as archive:
        for member in _checked_members(archive, manifest):
            target = scratch / member.name
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # users' files stay theirs on the host
            private = os.open(target, os.O_WRONLY | os.O_CREAT, 0o600)
            with archive.extractfile(member) as data, open(private, "wb") as out:
                shutil.copyfileobj(data, out)
            if _sha256(target) != manifest["members"][member.name]["sha256"]:
                raise BackupError(f"{member.name} does not match its checksum: the archive is damaged")
    return manifest


def stored_points(scratch: Path):
    """The points of an unpacked archive, a file's worth at a time."""
    for path in sorted((scratch / "index").glob("points-*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as rows:
            yield [_decode(json.loads(line)) for line in rows]


@dataclass(frozen=True)
class Targets:
    """Where a restore writes: the SQLite file to create (None: the database is a server's, restored apart), a new
    empty index, and the folders for the archive's named folders of files."""

    database: Path | None
    open_index: Callable[[], object]  # () -> retrieval.vectors.index.Index
    folders: dict[str, Path]


def _check_targets(manifest: dict, targets: Targets) -> None:
    """Refuse, before anything is unpacked or written, a database of another kind or a target in use."""
    kind = manifest["database"]["kind"]
    if kind == "sqlite" and targets.database is None:
        raise BackupError("the archive holds a SQLite catalog but SCHOLARLOOM_DATABASE_URL names a database "
                          "server: unset it to restore into the data directory")  # fmt: skip
    if kind != "sqlite" and targets.database is not None:
        raise BackupError(f"the archive's catalog was on {kind}: restore it there with pg_restore first, set "
                          "SCHOLARLOOM_DATABASE_URL to it, then restore the index and the files")  # fmt: skip
    if targets.database is not None and targets.database.exists():
        raise BackupError(f"{targets.database} exists: restore into a new data directory")
    for folder in targets.folders.values():
        if folder.exists() and any(folder.iterdir()):
            raise BackupError(f"{folder} is not empty: restore into a new data directory")


def restore(source: Path, targets: Targets, scratch_parent: Path, progress=None) -> dict:
    """Restore the archive into `targets` (each of them empty); returns its manifest."""
    _check_targets(read_manifest(source), targets)
    with tempfile.TemporaryDirectory(dir=scratch_parent, prefix=".restore.") as scratch_name:
        scratch = Path(scratch_name)
        manifest = unpack(source, scratch)  # every member checked before anything is written
        index = targets.open_index()
        if index.count():
            raise BackupError("the index already holds points: restore into a new data directory (or collection)")
        if targets.database is not None:
            targets.database.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(scratch / DATABASE, targets.database)
        task = progress.add_task("restore: index points", total=manifest["index"]["points"]) if progress else None
        for chunk in stored_points(scratch):
            index.load(chunk)
            if task is not None:
                progress.advance(task, len(chunk))
        for name, folder in targets.folders.items():
            if (scratch / "files" / name).is_dir():
                shutil.copytree(scratch / "files" / name, folder, dirs_exist_ok=True)
                folder.chmod(0o700)
    return manifest
