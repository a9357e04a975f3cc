"""`scholarloom ingest arxiv | openalex | s2`: harvests from the live services, resumable, then indexing."""

from __future__ import annotations

import typer

from scholarloom.cli.common import fail, ingest_app
from scholarloom.cli.run import execute

DETACH = typer.Option(False, "--detach", help="When a server runs this job, return at once instead of following it.")


def _date(value: str | None, name: str):
    from datetime import date

    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        fail(f"{name} must be a date like 2025-01-31, not {value!r}")


@ingest_app.command("arxiv")
def ingest_arxiv(
    query: str = typer.Option(None, help="An arXiv API query, e.g. 'ti:transformer AND abs:retrieval'."),
    category: list[str] = typer.Option([], "--category", "-c", help="A category (repeatable), e.g. cs.CL."),
    since: str = typer.Option(None, help="First submission (API) or change (OAI) date, YYYY-MM-DD."),
    until: str = typer.Option(None, help="Last submission (API) or change (OAI) date, YYYY-MM-DD."),
    oai: bool = typer.Option(False, "--oai", help="Bulk harvest with OAI-PMH ListRecords instead of the API."),
    oai_set: str = typer.Option(None, "--set", help="OAI-PMH set, e.g. cs or physics:hep-th."),
    metadata_format: str = typer.Option("arXiv", "--format", help="OAI-PMH metadata format: arXiv or arXivRaw."),
    limit: int = typer.Option(None, min=1, help="Stop after this many records (a later run continues)."),
    page_size: int = typer.Option(100, min=1, max=2000, help="Entries per API page."),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
    detach: bool = DETACH,
) -> None:
    """Harvest arXiv metadata (politely: one request every 3 s), then index the new papers. Resumable."""
    from ingest.harvest.arxiv import ArxivQuery

    first, last = _date(since, "--since"), _date(until, "--until")
    if oai and metadata_format not in ("arXiv", "arXivRaw"):
        fail("--format must be arXiv or arXivRaw")
    if not oai:
        try:
            ArxivQuery(query=query, categories=tuple(category), since=first, until=last).search_query()
        except ValueError as exc:
            fail(f"{exc} (--query, --category, --since/--until)")
    from jobs.arguments import ArxivArguments, JobKind

    arguments = ArxivArguments(query, tuple(category), since, until, oai, oai_set, metadata_format, limit, page_size,
                               index=not no_index)  # fmt: skip
    execute(JobKind.ARXIV, arguments, detach)


@ingest_app.command("openalex")
def ingest_openalex(
    refresh: bool = typer.Option(False, "--refresh", help="Ask again about papers asked about before."),
    limit: int = typer.Option(None, min=1, help="Ask about at most this many papers."),
    no_references: bool = typer.Option(False, "--no-references", help="Do not look up the titles of cited works."),
    no_entities: bool = typer.Option(
        False, "--no-entities", help="Do not fetch the full records of the authors and institutions named."
    ),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
    detach: bool = DETACH,
) -> None:
    """Enrich arXiv papers from OpenAlex: author ids and ORCIDs, institutions (ROR), references, cited-by counts."""
    from jobs.arguments import JobKind, OpenAlexArguments

    arguments = OpenAlexArguments(refresh, limit, references=not no_references, entities=not no_entities,
                                  index=not no_index)  # fmt: skip
    execute(JobKind.OPENALEX, arguments, detach)


@ingest_app.command("s2")
def ingest_s2(
    refresh: bool = typer.Option(False, "--refresh", help="Ask again about papers asked about before."),
    limit: int = typer.Option(None, min=1, help="Ask about at most this many papers."),
    no_references: bool = typer.Option(False, "--no-references", help="Do not fetch each paper's references."),
    citations: bool = typer.Option(False, "--citations", help="Also fetch who cites each paper (edges in the corpus)."),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
    detach: bool = DETACH,
) -> None:
    """Enrich papers from Semantic Scholar (by ARXIV:<id>, batch endpoint): author ids, references, citations."""
    from jobs.arguments import JobKind, S2Arguments

    arguments = S2Arguments(refresh, limit, references=not no_references, citations=citations, index=not no_index)
    execute(JobKind.S2, arguments, detach)
