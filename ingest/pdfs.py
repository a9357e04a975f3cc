"""PDFs into the archive: a catalog paper's full text, parsed in the bounded worker (`ingest.pdf_worker`), cut into
page-numbered passages and written through `ingest.writer.Writer` beside its abstract; its reference list becomes
citation edges. (A user's upload is read by the same worker in its own job: `jobs.kinds.index_upload`.)

A file is matched to its paper by its name: `<arXiv id>.pdf` (a version suffix is ignored; old-style ids
write the slash as `_`, e.g. `hep-th_9901001v2.pdf`), or `<paper id>.pdf` for any id the catalog holds.
The ledger stage `fulltext` keeps each file's SHA-256, so a rerun skips files that did not change; `fulltext:failed`
remembers PDFs that could not be fetched or parsed, so reruns do not try them again unless asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from pathlib import Path

from sqlmodel import select

from ingest.http import FetchError, FetchRefused, PoliteClient
from ingest.pdf_worker import PdfError, PdfLimits, PdfWorker
from ingest.pipeline import NullProgress
from ingest.report import Failure, Summary
from ingest.writer import People, Writer
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.citation_edges import ListedWork, add_citation, edges_of, resolve_citation_edges
from retrieval.scholarly.models import Paper
from retrieval.scholarly.records import split_arxiv_version

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


FAILED = "fulltext:failed"


def store_fulltext(
    writer: Writer,
    worker: PdfWorker,
    paper: Paper,
    data: bytes,
    summary: Summary,
    people: People,
    seen: dict[str, str],
    origin: str,
) -> bool:
    """Parse one PDF in the worker, index its passages, and add the arXiv ids and DOIs of its reference list as
    citation edges; the ledger records the file's SHA-256 with the edges. False when the PDF failed."""
    digest = hashlib.sha256(data).hexdigest()
    if seen.get(paper.id) == digest:
        summary.add("unchanged")
        return True
    try:
        parsed = worker.read(data)
    except PdfError as exc:
        summary.fail(Failure(STAGE, origin, str(exc)))
        writer.mark(FAILED, {paper.id: str(exc)[:200]})
        return False
    count = writer.full_text(paper, parsed.pages, people)
    cited = parsed.cited  # read in the worker, under its time limit
    with writer.catalog.session() as session, session.no_autoflush:  # one short write at the commit
        edges = edges_of(session, paper.id)
        written = len(edges)
        listed = set()
        for ref in parsed.references:  # in the list's order, each entry once, with or without an id
            entry = ListedWork(ref.authors, ref.year, ref.venue, ref.raw)
            add_citation(session, paper.id, arxiv_id=ref.arxiv_id, doi=ref.doi,
                         edges=edges, title=ref.title, entry=entry)  # fmt: skip
            listed.update((kind, value) for kind, value in (("arxiv", ref.arxiv_id), ("doi", ref.doi)) if value)
        for kind, value in cited:  # an id the list holds outside its first place in an entry
            if (kind, value) not in listed:
                arxiv_id, doi = (value, None) if kind == "arxiv" else (None, value)
                add_citation(session, paper.id, arxiv_id=arxiv_id, doi=doi, edges=edges)
        Catalog.mark(session, STAGE, paper.id, digest)
        session.flush()
        resolve_citation_edges(session, [paper.id])  # the new edges that point at papers already here
        session.commit()
    summary.add("updated" if paper.id in seen else "added")
    summary.add("passages", count)
    summary.add("references", len(edges) - written)
    return True


def ingest_pdf_files(
    writer: Writer,
    files: list[Path],
    summary: Summary,
    progress=None,
    *,
    limits: PdfLimits = PdfLimits(),
) -> None:
    progress = progress or NullProgress()
    task = progress.add_task("PDFs: parse + embed + index", total=len(files))
    catalog = writer.catalog
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
            store_fulltext(writer, worker, paper, data, summary, people, seen, str(path))


ARXIV_PDF_BASE = "https://arxiv.org/pdf"


def arxiv_pdf_url(arxiv_id: str, base: str = ARXIV_PDF_BASE) -> str:
    """Built from the id, never taken from a record: PDFs come from arxiv.org (or the mirror the settings name)."""
    return f"{base.rstrip('/')}/{arxiv_id}"


def download_pdfs(
    writer: Writer,
    client: PoliteClient,
    summary: Summary,
    progress=None,
    *,
    limits: PdfLimits = PdfLimits(),
    limit: int | None = None,
    retry_failed: bool = False,
    only: Collection[str] | None = None,
    pdf_base: str = ARXIV_PDF_BASE,
) -> None:
    """Fetch from arxiv.org the PDFs of papers that have no full text yet (`only` these papers), and index them."""
    progress, catalog = progress or NullProgress(), writer.catalog
    seen = catalog.ledger_hashes(STAGE)
    failed = {} if retry_failed else catalog.ledger_hashes(FAILED)
    with catalog.session() as session:
        rows = session.exec(select(Paper).where(Paper.arxiv_id.is_not(None)).order_by(Paper.published.desc())).all()
    todo = [p for p in rows if p.id not in seen and p.id not in failed and (only is None or p.id in only)][:limit]
    task = progress.add_task("PDFs: download + parse + index", total=len(todo))
    people = catalog.paper_people()
    with PdfWorker(limits) as worker:
        for paper in todo:
            progress.advance(task)
            url = arxiv_pdf_url(paper.arxiv_id, pdf_base)
            try:
                data = client.get(url).content
            except FetchError as exc:
                summary.fail(Failure(STAGE, url, str(exc)))
                refused = isinstance(exc, FetchRefused)  # e.g. a redirect off arxiv.org
                if refused or (exc.status is not None and exc.status < 500 and exc.status != 429):
                    writer.mark(FAILED, {paper.id: str(exc)[:200]})  # a 404 will not mend itself; a 503 may
                continue
            store_fulltext(writer, worker, paper, data, summary, people, seen, url)
