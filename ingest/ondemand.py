"""One arXiv paper on request: its record by id, OpenAlex's view of it, its PDF, indexed (the `paper` job).

Every address is built from the id alone (the arXiv API's `id_list`, arxiv.org/pdf/<id>, OpenAlex by the arXiv
DOI); nothing a person or a model typed becomes a URL. Only the record is required: an OpenAlex or PDF failure
is reported and the paper is still added, with what could be had.
"""

from __future__ import annotations

from ingest.harvest.openalex import OpenAlex, enrich_from_openalex
from ingest.http import FetchError, PoliteClient
from ingest.indexing import index_papers
from ingest.parsers.arxiv import atom_error, parse_atom
from ingest.pdf_worker import PdfLimits
from ingest.pdfs import ARXIV_PDF_BASE, download_pdfs
from ingest.pipeline import NullProgress, finish_catalog, load_records
from ingest.report import Failure, Summary
from ingest.writer import Writer
from retrieval.scholarly.catalog import Catalog
from retrieval.scholarly.records import PaperRecord, is_arxiv_id

STAGE = "catalog:arxiv_ondemand"


class NotOnArxiv(LookupError):
    """arXiv has no paper with this id (or refused the id): the request ends with this message."""


class NotStored(RuntimeError):
    """arXiv's record could not be stored here: the request fails (and can be retried) rather than end without it."""


def fetch_arxiv_record(catalog: Catalog, client: PoliteClient, api_url: str, arxiv_id: str, summary: Summary) -> str:
    """Ask the arXiv API for one id and store its record; returns the catalog's paper id."""
    if not is_arxiv_id(arxiv_id):
        raise NotOnArxiv(f"{arxiv_id[:40]!r} is not an arXiv id")
    response = client.get(api_url, params={"id_list": arxiv_id, "max_results": 1})
    if message := atom_error(response.content):
        raise NotOnArxiv(f"arXiv refused the id {arxiv_id}: {message}")
    found = [r for r in parse_atom(response.content) if isinstance(r, PaperRecord) and r.arxiv_id == arxiv_id]
    if not found:
        raise NotOnArxiv(f"arXiv has no paper {arxiv_id}")
    failed = len(summary.failures)
    load_records(catalog, STAGE, found[:1], summary)
    paper_id = catalog.resolve_paper_id(arxiv_id)
    if paper_id is None:  # not stored: the reason is the failure load_records reported
        reasons = "; ".join(f.reason for f in summary.failures[failed:]) or "no reason given"
        raise NotStored(f"the record of {arxiv_id} could not be stored: {reasons}")
    return paper_id


def fetch_paper(
    writer: Writer,
    client: PoliteClient,
    arxiv_id: str,
    summary: Summary,
    progress=None,
    *,
    api_url: str,
    openalex: OpenAlex | None = None,
    limits: PdfLimits = PdfLimits(),
    pdf_base: str = ARXIV_PDF_BASE,
) -> str:
    """The whole request: record, OpenAlex enrichment, index, full text. Returns the paper id."""
    progress, catalog = progress or NullProgress(), writer.catalog
    task = progress.add_task(f"arXiv {arxiv_id}: record, OpenAlex, index, PDF", total=4)
    paper_id = fetch_arxiv_record(catalog, client, api_url, arxiv_id, summary)
    progress.advance(task)
    if openalex is not None:
        try:
            enrich_from_openalex(catalog, openalex, summary, only={paper_id})
        except FetchError as exc:  # the paper is still worth having without OpenAlex's view
            summary.fail(Failure("openalex", paper_id, f"OpenAlex did not answer: {exc}"))
    progress.advance(task)
    finish_catalog(catalog)
    index_papers(writer, summary)
    progress.advance(task)
    download_pdfs(writer, client, summary, limits=limits, only={paper_id}, pdf_base=pdf_base)
    progress.advance(task)
    return paper_id
