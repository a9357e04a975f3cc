"""The bundled demo corpus, loaded through the same parsers as the live harvesters."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ingest.indexing import index_papers
from ingest.parsers.arxiv import parse_atom, parse_site_record, parse_snapshot_lines
from ingest.parsers.openalex import parse_authors, parse_institutions, parse_works
from ingest.parsers.pdf_metadata import parse_pdf_metadata_lines
from ingest.parsers.ror import parse_ror_lines
from ingest.pdfs import ingest_pdf_files, pdf_files
from ingest.pipeline import finish_catalog, load_records
from ingest.report import Failure, Summary
from ingest.writer import Writer
from retrieval.vectors.vector_book import BookedEmbedder, VectorBook, write_book

log = logging.getLogger(__name__)
DEMO_DIR = Path(__file__).resolve().parent.parent / "data" / "demo"

# OpenAlex list responses in the corpus that hold full works (the others are errors, counts or id lists).
WORK_LISTS = (
    "works_filter_openalex_2ids_cursor.json",
    "works_filter_cites_cursor_5results.json",
    "works_filter_cited_by_cursor_38results.json",
    "work_W2162348455.json",
    "work_W4234567890_paratext_null_title.json",
)


@dataclass(frozen=True)
class Source:
    stage: str
    read: Callable[[], list]


def _json_file(path: Path, parse: Callable) -> list:
    """Parse one JSON file; an unreadable file is one failure, not a crash."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [Failure(path.name, path.name, f"unreadable file: {exc}")]
    except RecursionError:
        return [Failure(path.name, path.name, "unreadable file: JSON nested too deeply")]
    return list(parse(payload))


def _lines(path: Path, parse: Callable) -> list:
    with path.open(encoding="utf-8", errors="replace") as handle:
        return list(parse(handle))


def _atom(path: Path) -> list:
    try:
        return list(parse_atom(path.read_bytes()))
    except Exception as exc:  # defusedxml/expat errors: the page is unusable, the run goes on
        return [Failure("arxiv_api", path.name, f"unreadable Atom page: {type(exc).__name__}: {exc}")]


def _site_records(root: Path) -> list:
    out = []
    for seed in sorted((root / "seed").glob("*.json")):
        site = json.loads(seed.read_text())
        record_path = next((root / "arxiv_records").glob(f"{seed.stem}_*.json"), None)
        arxiv = json.loads(record_path.read_text()) if record_path else None
        out.append(parse_site_record(site, arxiv))
    return out


def demo_sources(root: Path = DEMO_DIR) -> list[Source]:
    """One source per file, in merge order: institutions, researchers, then papers (arXiv, then OpenAlex).

    Each file is its own ledger stage, so two files describing one record never undo each other on a rerun.
    """
    openalex = root / "openalex"
    sources = [
        Source(f"demo:ror/{p.name}", lambda p=p: _lines(p, parse_ror_lines))
        for p in sorted((root / "ror").glob("*.jsonl"))
    ]
    institution_files = [
        openalex / "samples" / "institutions_sample.json",
        *sorted((openalex / "entities").glob("I*.json")),
    ]
    author_files = [openalex / "samples" / "authors_sample.json", *sorted((openalex / "entities").glob("A*.json"))]
    sources += [
        Source(f"demo:openalex/{p.name}", lambda p=p: _json_file(p, parse_institutions))
        for p in institution_files
        if p.exists()
    ]
    sources += [
        Source(f"demo:openalex/{p.name}", lambda p=p: _json_file(p, parse_authors)) for p in author_files if p.exists()
    ]
    # The abs-file snapshot first; the Kaggle head (with parsed author names) refines it.
    snapshots = sorted((root / "arxiv_metadata").glob("*.jsonl"), key=lambda p: "head" in p.name)
    sources += [Source(f"demo:arxiv_metadata/{p.name}", lambda p=p: _lines(p, parse_snapshot_lines)) for p in snapshots]
    sources += [
        Source(f"demo:arxiv_api_atom/{p.name}", lambda p=p: _atom(p))
        for p in sorted((root / "arxiv_api_atom").glob("*.xml"))
    ]
    sources.append(Source("demo:seed", lambda: _site_records(root)))
    pdf_metadata = root / "pdfs" / "metadata.jsonl"
    if pdf_metadata.exists():  # the papers whose full text ships with the demo
        sources.append(Source("demo:pdfs/metadata.jsonl", lambda: _lines(pdf_metadata, parse_pdf_metadata_lines)))
    work_files = [
        openalex / "samples" / "works_sample.json",
        *sorted((openalex / "entities").glob("W*.json")),
        *(openalex / "api_cassettes" / name for name in WORK_LISTS),
    ]
    sources += [
        Source(f"demo:openalex/{p.name}", lambda p=p: _json_file(p, parse_works)) for p in work_files if p.exists()
    ]
    return sources


def vector_book_path(root: Path = DEMO_DIR) -> Path:
    return root / "vectors" / "all-MiniLM-L6-v2.npz"


def with_vector_book(embedder, book: str = "demo"):
    """`embedder` behind a vector book read on first use (SCHOLARLOOM_VECTOR_BOOK): 'demo', the bundled demo's, so a
    server's jobs that embed text it holds (an index rebuild of the demo, a demo paper's PDF fetched or uploaded
    again) read its vectors instead of running the encoder; a path, another book; 'off', `embedder` as it is.
    Nothing is remembered beside the book, so a long-lived server does not grow."""
    if book == "off":
        return embedder
    path = vector_book_path() if book == "demo" else Path(book).expanduser()

    def read() -> VectorBook:
        found = VectorBook.read(path, embedder.model_id())
        if found.note:
            log.warning("vector book for jobs: %s", found.note)
        return found

    return BookedEmbedder(embedder, read, remember=False)


def load_demo(
    writer: Writer,
    root: Path = DEMO_DIR,
    progress=None,
    *,
    write_vectors: bool = False,
) -> Summary:
    """Load every demo source into the catalog, embed and index what changed, then the full text of the PDFs in
    `pdfs/` (page-numbered passages). Idempotent.

    Dense vectors come from the corpus's vector book when it was written by this embedder's model (the rest are
    computed); `write_vectors` writes the book again from every vector this run used (`make demo-vectors`).
    """
    summary = Summary()
    if not root.is_dir():
        raise FileNotFoundError(f"demo corpus not found at {root}")
    catalog, embedder = writer.catalog, writer.embedder
    if write_vectors and writer.index.count():
        raise ValueError("writing the demo's vector book needs an empty index: every vector must be used once")
    for source in demo_sources(root):
        load_records(catalog, source.stage, source.read(), summary, progress)
    finish_catalog(catalog)
    booked = BookedEmbedder(embedder, VectorBook.read(vector_book_path(root), embedder.model_id()))
    if booked.book.note and vector_book_path(root).exists():
        log.warning("demo vectors: %s", booked.book.note)
    index_papers(writer.encoding_with(booked), summary, progress)
    if (root / "pdfs").is_dir():
        ingest_pdf_files(writer.encoding_with(booked), pdf_files([root / "pdfs"]), summary, progress)
    summary.add("vectors read", booked.from_book)
    summary.add("vectors computed", booked.computed)
    if write_vectors:
        write_book(vector_book_path(root), booked.book.model, booked.used)
    return summary
