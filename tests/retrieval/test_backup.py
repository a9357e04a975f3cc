"""The backup archive (retrieval/upkeep/backup.py) on a small catalog, index and folders: a round trip keeps every
row, point
(vectors and payload, private ones too) and file byte for byte; a damaged, forged or misplaced archive is refused
before anything is written; a backup cut off leaves nothing where the archive was to go. The whole product under
`serve`, while users chat and a job runs: tests/scholarloom/test_backup_serve.py."""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from pathlib import Path

import numpy as np
import pytest

from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.models import Paper
from retrieval.upkeep.backup import BackupError, Sources, Targets, restore, table_counts, write_backup
from retrieval.vectors.edge import EdgeStore
from retrieval.vectors.embeddings import SparseVector
from retrieval.vectors.index import Index
from retrieval.vectors.store import StoredPoint


def _points(n: int) -> list[StoredPoint]:
    rng = np.random.default_rng(7)
    return [
        StoredPoint(
            str(uuid.uuid4()),
            rng.random(384, dtype=np.float32),
            SparseVector([i, i + 10], [0.5, 1.25]),
            {"paper_id": f"2401.{i:05d}", "kind": "passage", "number": i, "text": f"passage {i} ünïcode", "page": i}
            | ({"owner": "alice"} if i % 3 == 0 else {}),
        )
        for i in range(n)
    ]


@pytest.fixture
def source(tmp_path):
    """A catalog with two papers, an index of 2,500 points (two archive files' worth), and two folders of files."""
    catalog = Catalog(f"sqlite:///{tmp_path / 'src' / 'scholarloom.db'}")
    with catalog.session() as session:
        session.add(Paper(id="2401.00001", title="One", abstract="First."))
        session.add(Paper(id="2401.00002", title="Two", abstract="Second."))
        session.commit()
    index = Index(EdgeStore(tmp_path / "src" / "index"))
    points = _points(2500)
    index.load(points)
    chat, uploads = tmp_path / "src" / "chat-files", tmp_path / "src" / "uploads"
    (chat / "alice" / "t1").mkdir(parents=True)
    (chat / "alice" / "t1" / "card.json").write_text('{"id": "2401.00001"}')
    uploads.mkdir()
    (uploads / "7.pdf").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40)
    yield Sources(catalog.engine, index, {"chat-files": chat, "uploads": uploads}, {"collection": "papers"}), points
    index.close()
    catalog.engine.dispose()


def _targets(root: Path) -> tuple[Targets, list]:
    opened = []

    def open_index():
        opened.append(Index(EdgeStore(root / "index")))
        return opened[-1]

    folders = {"chat-files": root / "chat-files", "uploads": root / "uploads"}
    return Targets(root / "scholarloom.db", open_index, folders), opened


def test_a_round_trip_keeps_every_row_point_and_file(source, tmp_path):
    sources, points = source
    import os

    old = os.umask(0o022)  # a usual umask: the archive is private all the same
    try:
        manifest = write_backup(tmp_path / "backup.tar", sources)
    finally:
        os.umask(old)
    assert (tmp_path / "backup.tar").stat().st_mode & 0o777 == 0o600  # password hashes, chat history, uploads
    assert manifest["index"] == {"points": 2500, "kinds": {"passage": 2500}}
    assert manifest["database"]["counts"]["papers"] == 2 and manifest["files"] == {"chat-files": 1, "uploads": 1}
    with tarfile.open(tmp_path / "backup.tar") as archive:
        names = archive.getnames()
    assert names[0] == "manifest.json" and "index/points-00001.jsonl.gz" in names and "settings.json" in names

    targets, opened = _targets(tmp_path / "restored")
    assert restore(tmp_path / "backup.tar", targets, tmp_path)["index"]["points"] == 2500
    index = opened[0]
    restored = {p.id: p for chunk in index.points(700) for p in chunk}
    stored = {p.id: p for chunk in sources.index.points() for p in chunk}  # as the store keeps them (normalised)
    assert set(restored) == set(stored) == {p.id for p in points}
    for point in stored.values():
        again = restored[point.id]
        assert np.array_equal(again.dense, point.dense) and again.payload == point.payload
        assert again.sparse.indices == point.sparse.indices and again.sparse.values == point.sparse.values
    index.close()
    catalog = Catalog(f"sqlite:///{targets.database}")
    assert table_counts(catalog.engine) == manifest["database"]["counts"]
    catalog.engine.dispose()
    copy = tmp_path / "restored" / "uploads" / "7.pdf"
    assert copy.read_bytes() == (tmp_path / "src" / "uploads" / "7.pdf").read_bytes()
    assert copy.stat().st_mode & 0o077 == 0 and (tmp_path / "restored" / "uploads").stat().st_mode & 0o077 == 0
    assert (tmp_path / "restored" / "chat-files" / "alice" / "t1" / "card.json").read_text() == '{"id": "2401.00001"}'


def _rewrite(archive: Path, change) -> None:
    """The archive with `change(name, bytes) -> (name, bytes) | None` applied to each member (None drops it)."""
    with tarfile.open(archive) as old:
        members = [(m.name, old.extractfile(m).read()) for m in old.getmembers()]
    with tarfile.open(archive, "w") as new:
        for name, data in members:
            changed = change(name, data)
            if changed is not None:
                info = tarfile.TarInfo(changed[0])
                info.size = len(changed[1])
                new.addfile(info, io.BytesIO(changed[1]))


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda n, d: (n, d[:-1] + bytes([d[-1] ^ 1])) if n.endswith("7.pdf") else (n, d),
         "does not match its checksum"),
        (lambda n, d: ("../escaped.pdf", d) if n.endswith("7.pdf") else (n, d), "which its manifest does not list"),
        (lambda n, d: None if n.endswith("7.pdf") else (n, d), "the archive lacks files/uploads/7.pdf"),
        (lambda n, d: (n, json.dumps({**json.loads(d), "format": 99}).encode()) if n == "manifest.json" else (n, d),
         "has backup format 99"),
    ],
    ids=["damaged", "outside", "missing", "newer"],
)
def test_a_damaged_or_forged_archive_is_refused_before_anything_is_written(source, tmp_path, change, said):
    write_backup(tmp_path / "backup.tar", source[0])
    _rewrite(tmp_path / "backup.tar", change)
    targets, opened = _targets(tmp_path / "restored")
    with pytest.raises(BackupError, match=said):
        restore(tmp_path / "backup.tar", targets, tmp_path)
    assert not targets.database.exists() and not opened and not (tmp_path / "escaped.pdf").exists()
    assert not (tmp_path / "restored" / "uploads").exists()


def test_a_restore_never_writes_over_a_directory_in_use(source, tmp_path):
    write_backup(tmp_path / "backup.tar", source[0])
    targets, opened = _targets(tmp_path / "restored")
    (tmp_path / "restored" / "uploads").mkdir(parents=True)
    (tmp_path / "restored" / "uploads" / "mine.pdf").write_bytes(b"%PDF")
    with pytest.raises(BackupError, match="is not empty"):
        restore(tmp_path / "backup.tar", targets, tmp_path)
    assert not targets.database.exists() and (tmp_path / "restored" / "uploads" / "mine.pdf").read_bytes() == b"%PDF"
    (tmp_path / "restored" / "uploads" / "mine.pdf").unlink()
    targets.database.write_bytes(b"a catalog in use")
    with pytest.raises(BackupError, match="scholarloom.db exists"):
        restore(tmp_path / "backup.tar", targets, tmp_path)
    assert targets.database.read_bytes() == b"a catalog in use" and not opened


def test_a_backup_cut_off_leaves_nothing_and_an_archive_is_never_overwritten(source, tmp_path, monkeypatch):
    sources, _ = source

    def failing(chunk=1000):
        yield []
        raise OSError("disk full")

    monkeypatch.setattr(sources.index, "points", failing)
    with pytest.raises(OSError, match="disk full"):
        write_backup(tmp_path / "backup.tar", sources)
    assert list(tmp_path.iterdir()) == [tmp_path / "src"]  # no archive, no scratch left behind
    monkeypatch.undo()
    (tmp_path / "backup.tar").write_bytes(b"an older backup")
    with pytest.raises(BackupError, match="exists: a backup never overwrites"):
        write_backup(tmp_path / "backup.tar", sources)
    assert (tmp_path / "backup.tar").read_bytes() == b"an older backup"
