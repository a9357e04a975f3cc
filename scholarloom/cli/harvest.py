"""`scholarloom ingest arxiv | openalex | s2`: harvests from the live services, resumable, then indexing."""

from __future__ import annotations

from contextlib import closing

import typer

from scholarloom.cli.common import fail, ingest_app, load_settings, open_index, progress, report


def index_changes(settings, index, summary, progress) -> None:
    """After records changed: cross-record work, then embed and index what changed."""
    from ingest.pipeline import finish_catalog, index_papers

    catalog = settings.catalog()
    finish_catalog(catalog)
    index_papers(catalog, index, settings.embedder(), summary, progress)


def harvest(settings, run, what: str, index_after: bool = True) -> None:
    """Run a harvest with progress bars; a fetch error ends it with the reason (what was stored stays)."""
    from ingest.http import FetchError
    from ingest.report import Summary

    summary = Summary()
    failed = None
    with closing(settings):
        index = open_index(settings) if index_after else None
        with settings.fetcher() as client, progress() as bars:
            try:
                run(client, summary, bars)
            except FetchError as exc:
                failed = str(exc)
            if index is not None:
                index_changes(settings, index, summary, bars)
        report(settings, summary, f"{what}: {summary.line()}", "records")
    if failed:
        fail(f"{failed}\nEverything fetched before this is stored; run the same command again to resume.")


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
) -> None:
    """Harvest arXiv metadata (politely: one request every 3 s), then index the new papers. Resumable."""
    from ingest.harvest.arxiv import ArxivQuery, harvest_api, harvest_oai

    settings = load_settings()
    src = settings.sources
    first, last = _date(since, "--since"), _date(until, "--until")
    if oai:
        if metadata_format not in ("arXiv", "arXivRaw"):
            fail("--format must be arXiv or arXivRaw")

        def run(client, summary, progress):
            options = {"metadata_prefix": metadata_format, "set_spec": oai_set, "since": first, "until": last}
            harvest_oai(settings.catalog(), client, src.arxiv_oai_url, summary, progress, **options, limit=limit)
    else:
        wanted = ArxivQuery(query=query, categories=tuple(category), since=first, until=last)
        try:
            wanted.search_query()
        except ValueError as exc:
            fail(f"{exc} (--query, --category, --since/--until)")

        def run(client, summary, progress):
            harvest_api(settings.catalog(), client, src.arxiv_api_url, wanted, summary, progress,
                        page_size=page_size, limit=limit)  # fmt: skip

    harvest(settings, run, "arXiv", index_after=not no_index)


@ingest_app.command("openalex")
def ingest_openalex(
    refresh: bool = typer.Option(False, "--refresh", help="Ask again about papers asked about before."),
    limit: int = typer.Option(None, min=1, help="Ask about at most this many papers."),
    no_references: bool = typer.Option(False, "--no-references", help="Do not look up the titles of cited works."),
    no_entities: bool = typer.Option(
        False, "--no-entities", help="Do not fetch the full records of the authors and institutions named."
    ),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
) -> None:
    """Enrich arXiv papers from OpenAlex: author ids and ORCIDs, institutions (ROR), references, cited-by counts."""
    from ingest.harvest.openalex import OpenAlex, enrich_entities, enrich_papers, name_references

    settings = load_settings()
    src = settings.sources
    key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None

    def run(client, summary, progress):
        api = OpenAlex(client, src.openalex_url, src.contact_email, key)
        if budget := api.budget():
            typer.echo(f"OpenAlex budget left today: ${budget.get('daily_remaining_usd')}")
        enrich_papers(settings.catalog(), api, summary, progress, refresh=refresh, limit=limit)
        if not no_references:
            name_references(settings.catalog(), api, summary, progress)
        if not no_entities:
            enrich_entities(settings.catalog(), api, summary, progress, refresh=refresh)

    harvest(settings, run, "OpenAlex", index_after=not no_index)


@ingest_app.command("s2")
def ingest_s2(
    refresh: bool = typer.Option(False, "--refresh", help="Ask again about papers asked about before."),
    limit: int = typer.Option(None, min=1, help="Ask about at most this many papers."),
    no_references: bool = typer.Option(False, "--no-references", help="Do not fetch each paper's references."),
    citations: bool = typer.Option(False, "--citations", help="Also fetch who cites each paper (edges in the corpus)."),
    no_index: bool = typer.Option(False, "--no-index", help="Only fill the catalog; index later."),
) -> None:
    """Enrich papers from Semantic Scholar (by ARXIV:<id>, batch endpoint): author ids, references, citations."""
    from ingest.harvest.s2 import SemanticScholar, enrich_papers

    settings = load_settings()
    src = settings.sources
    key = src.s2_api_key.get_secret_value() if src.s2_api_key else None

    def run(client, summary, progress):
        api = SemanticScholar(client, src.s2_url, key)
        enrich_papers(settings.catalog(), api, summary, progress, refresh=refresh, references=not no_references,
                      limit=limit, citations=citations)  # fmt: skip

    harvest(settings, run, "Semantic Scholar", index_after=not no_index)


