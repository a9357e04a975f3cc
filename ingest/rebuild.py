"""A new index computed again from what the archive keeps: every catalog paper's abstract point and windows from
the catalog, every full-text passage from its stored text, each upload's description from its row. The path to a
new embedding model or a new index format, and a way back from a damaged index (its passages' texts are read from
it, so they must still be readable).
"""

from __future__ import annotations

from collections import Counter

from ingest.indexing import INDEX_BATCH, index_papers
from ingest.pipeline import NullProgress
from ingest.report import Summary
from ingest.writer import Writer, upload_text
from retrieval.library.uploads import PREFIX, Uploads
from retrieval.vectors.index import ANYONE, Filters, Index
from retrieval.vectors.points import ABSTRACT_KINDS, PASSAGE_KINDS
from retrieval.vectors.store import StoredPoint

EVERY_KIND = ABSTRACT_KINDS + PASSAGE_KINDS


class RebuildError(RuntimeError):
    """The old index holds something a rebuild cannot compute again; the new index is left unused."""


def _texts(chunk: list[StoredPoint], uploads: Uploads) -> tuple[list[tuple[StoredPoint, str]], int]:
    """The points of `chunk` the catalog cannot give back, each with the text to embed again, and how many points
    of deleted uploads (deleted while the rebuild read the index) were left behind."""
    again, dropped, rows = [], 0, {}
    for point in chunk:
        kind, paper_id = point.payload.get("kind"), str(point.payload.get("paper_id", ""))
        upload = None
        if paper_id.startswith(PREFIX):
            number = int(paper_id.removeprefix(PREFIX))
            if number not in rows:
                rows[number] = uploads.by_id(number)
            upload = rows[number]
            if upload is None:
                dropped += 1
                continue
        if kind in PASSAGE_KINDS:
            again.append((point, point.payload.get("text") or ""))
        elif upload is not None and kind == "abstract":
            title = upload.title or upload.filename.removesuffix(".pdf")
            again.append((point, upload_text(title, upload.abstract or "")))
        elif kind in ABSTRACT_KINDS and upload is None:
            continue  # a catalog paper's: embedded from the catalog below
        else:
            raise RebuildError(f"point {point.id} is of kind {kind!r}, which a rebuild cannot compute again")
    return again, dropped


def _drop_deleted_uploads(uploads: Uploads, writer: Writer, carried: set[str]) -> int:
    """Uploads deleted after the rebuild read their points: their points leave the new index too (how many)."""
    gone = [paper_id for paper_id in sorted(carried) if uploads.by_id(int(paper_id.removeprefix(PREFIX))) is None]
    if not gone:
        return 0
    points = writer.index.count(Filters(paper_ids=tuple(gone), viewer=ANYONE))
    writer.forget(gone, EVERY_KIND)
    return points


def rebuild_index(writer: Writer, uploads: Uploads, old: Index, summary: Summary, progress=None) -> Counter:
    """Fill the writer's index (empty) from the catalog, the uploads' rows and `old`'s passages; returns the points
    the new index holds by kind (and `dropped`: points of uploads deleted meanwhile). `old` is only read."""
    progress, new = progress or NullProgress(), writer.index
    if new.count():
        raise RebuildError("the new index is not empty")
    task = progress.add_task("rebuild: passages and uploads", total=old.count())
    carried: set[str] = set()
    dropped = 0
    for chunk in old.points(INDEX_BATCH * 4):
        again, left = _texts(chunk, uploads)
        dropped += left
        writer.again(again)
        carried |= {str(p.payload["paper_id"]) for p, _ in again if str(p.payload["paper_id"]).startswith(PREFIX)}
        progress.advance(task, len(chunk))
    index_papers(writer, summary, progress, optimize=False, everything=True)
    dropped += _drop_deleted_uploads(uploads, writer, carried)
    writer.optimize()
    written = Counter({kind: new.count(Filters(kinds=(kind,), viewer=ANYONE)) for kind in EVERY_KIND})
    return written + Counter(dropped=dropped)
