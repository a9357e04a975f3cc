"""Full text from PDF files: parsed in the bounded worker, cut into passages, indexed beside the abstracts.

A file is matched to its paper by its name: `<arXiv id>.pdf` (a version suffix is ignored; old-style ids
write the slash as `_`, e.g. `hep-th_9901001v2.pdf`), or `<paper id>.pdf` for any id the catalog holds.
The ledger stage `fulltext` keeps each file's SHA-256, so a rerun skips files that did not change.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ingest.pdf_worker import PdfError, PdfLimits, PdfWorker
from ingest.pipeline import NullProgress, index_fulltext
from ingest.report import Failure, Summary
from retrieval.catalog import Catalog
from retrieval.embeddings import Embedder
from retrieval.index import Index
from retrieval.records import split_arxiv_version

STAGE = "fulltext"


def paper_id_for(path: Path) -> str:
    stem = path.name.removesuffix(".pdf").removesuffix(".PDF")
    bare, _ = split_arxiv_version(stem.replace("_", "/", 1) if "_" in stem and "." not in stem else stem)
    return bare


def pdf_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found += sorted(path.glob("*.pdf")) if path.is_dir() else [path]
    return found


def ingest_pdf_files(
    catalog: Catalog,
    index: Index,
    embedder: Embedder,
    files: list[Path],
    summary: Summary,
    progress=None,
    limits: PdfLimits = PdfLimits(),
) -> None:
    progress = progress or NullProgress()
    task = progress.add_task("PDFs: parse + embed + index", total=len(files))
    seen = catalog.ledger_hashes(STAGE)
    people = catalog.paper_people()
    with PdfWorker(limits) as worker:
        for path in files:
            progress.advance(task)
            key = paper_id_for(path)
            paper_id = catalog.resolve_paper_id(key)
            paper = catalog.papers([paper_id]).get(paper_id) if paper_id else None
            if paper is None:
                summary.fail(Failure(STAGE, str(path), f"no paper {key!r} in the catalog; ingest its metadata first"))
                continue
            try:
                data = path.read_bytes()
            except OSError as exc:
                summary.fail(Failure(STAGE, str(path), f"cannot read the file: {exc}"))
                continue
            digest = hashlib.sha256(data).hexdigest()
            if seen.get(paper.id) == digest:
                summary.add("unchanged")
                continue
            try:
                pages = worker.extract(data)
            except PdfError as exc:
                summary.fail(Failure(STAGE, str(path), str(exc)))
                continue
            count = index_fulltext(catalog, index, embedder, paper, pages, people)
            with catalog.session() as session:
                Catalog.mark(session, STAGE, paper.id, digest)
                session.commit()
            summary.add("updated" if paper.id in seen else "added")
            summary.add("passages", count)
