"""A user's uploaded PDF made searchable for that user alone: the `upload` job.

The file was checked and stored by the request that received it (`web.library`); the job parses it in the
bounded PDF worker, reads its title, authors and abstract from the file (`ingest.pdf_meta`), cuts its pages into
passages and indexes them with the owner's name in every point's payload (`retrieval.vectors.store` filters on it), and
links it to the catalog's paper when the file prints an arXiv id or DOI the catalog holds.
"""

from __future__ import annotations

from dataclasses import replace

from ingest.fulltext import passages
from ingest.pdf_worker import PdfError, PdfLimits, PdfWorker
from ingest.report import Failure, Summary
from retrieval.library.uploads import JOB_KIND, KINDS, Upload, Uploads, UploadState
from retrieval.scholarly.catalog import Catalog
from retrieval.vectors.embeddings import Embedder
from retrieval.vectors.index import Filed, Index, PointKind, abstract_point, passage_points

KIND = JOB_KIND


class UploadFailed(RuntimeError):
    """The upload cannot be indexed; the message says why (and is kept on the upload's row)."""


def index_upload(
    catalog: Catalog, index: Index, embedder: Embedder, uploads: Uploads, upload_id: int, limits: PdfLimits,
    summary: Summary, progress=None, fields_only: bool = False,
) -> str:  # fmt: skip
    """Parse, describe and index one upload; returns the closing note. `fields_only`: the user corrected the
    title, authors or abstract of an indexed file, so only its title-and-abstract point is embedded again."""
    upload = uploads.by_id(upload_id)
    if upload is None:
        return f"upload {upload_id} was deleted before it was indexed"
    if fields_only and upload.edited and upload.passages:
        return _describe_again(index, embedder, uploads, upload)
    try:
        with PdfWorker(limits) as worker:
            parsed = worker.read(uploads.file(upload).read_bytes())
    except (PdfError, OSError) as exc:
        uploads.move(upload_id, UploadState.FAILED, error=str(exc)[:500])
        summary.fail(Failure(KIND, upload.filename, str(exc)))
        raise UploadFailed(str(exc)) from exc
    meta = parsed.meta
    if upload.edited:  # the user's corrections stand
        meta = replace(meta, title=upload.title or meta.title, authors=upload.authors, abstract=upload.abstract)
    title = meta.title or upload.filename.removesuffix(".pdf")
    found = passages(parsed.pages, embedder.count_tokens)
    vectors = embedder.documents([upload_text(title, meta.abstract), *(p.text for p in found)])
    filed = Filed(owner=upload.owner)
    points = [abstract_point(upload.point_paper_id, vectors[0], filed)]
    points += passage_points(upload.point_paper_id, found, vectors[1:], filed)
    index.replace([upload.point_paper_id], points, kinds=KINDS)
    now = uploads.by_id(upload_id)
    if now is None:  # deleted while it was being indexed: leave nothing behind
        index.replace([upload.point_paper_id], [], kinds=KINDS)
        return f"upload {upload_id} was deleted while it was indexed"
    linked = catalog.resolve_paper_id(meta.arxiv_id or "") if meta.arxiv_id else None
    linked = linked or (catalog.paper_by_doi(meta.doi) if meta.doi else None)
    summary.add("pages", len(parsed.pages))
    summary.add("passages", len(found))
    counts = dict(pages=len(parsed.pages), passages=len(found), arxiv_id=meta.arxiv_id, doi=meta.doi, paper_id=linked)
    if now.edited and not upload.edited:  # corrected while the file was read: the corrections win
        uploads.update(upload_id, **counts)
        return _describe_again(index, embedder, uploads, uploads.by_id(upload_id))
    uploads.move(upload_id, UploadState.INDEXED, error=None, title=title, authors=meta.authors, abstract=meta.abstract,
                 **counts)  # fmt: skip
    return f"{upload.filename}: {len(parsed.pages)} pages, {len(found)} passages"


def upload_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract}".strip(" .")


def _describe_again(index: Index, embedder: Embedder, uploads: Uploads, upload: Upload) -> str:
    """The corrected title and abstract embedded as the upload's one `abstract` point; its passages are the file's
    own and stay."""
    vector = embedder.documents([upload_text(upload.title, upload.abstract)])[0]
    point = abstract_point(upload.point_paper_id, vector, Filed(owner=upload.owner))
    index.replace([upload.point_paper_id], [point], kinds=(PointKind.ABSTRACT.value,))
    if uploads.by_id(upload.id) is None:  # deleted meanwhile: leave nothing behind
        index.replace([upload.point_paper_id], [], kinds=KINDS)
        return f"upload {upload.id} was deleted while it was described again"
    uploads.move(upload.id, UploadState.INDEXED, error=None)
    return f"{upload.filename}: described again"
