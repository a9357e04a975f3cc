"""`scholarloom ingest demo | pdfs | analyse | update`: the bundled corpus, full text, analysis, the cron run."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import typer

from scholarloom.cli.common import fail, ingest_app, load_settings, open_index, progress, report
from scholarloom.cli.harvest import harvest, index_changes


@ingest_app.command("demo")
def ingest_demo(
    source: Path = typer.Option(None, help="Folder of the demo corpus (default: the bundled data/demo)."),
    write_vectors: bool = typer.Option(
        False, help="Write the corpus's vector book from this load (needs an empty data directory)."
    ),
) -> None:
    """Load the bundled demo corpus into the catalog and the index (idempotent)."""
    from ingest.demo import DEMO_DIR, load_demo
    from retrieval.index import Filters

    root = source or DEMO_DIR
    if not root.is_dir():
        fail(f"no demo corpus at {root}")
    with closing(load_settings()) as settings:
        index = open_index(settings)
        if write_vectors and index.count():
            fail(f"--write-vectors needs an empty data directory; {settings.data_dir} already holds an index")
        with progress() as bars:
            summary = load_demo(settings.catalog(), index, settings.embedder(), root, bars, write_vectors=write_vectors)
        report(settings, summary, f"demo corpus: {summary.line()}", "records")
        counts = settings.catalog().counts()
        kinds = {kind: index.count(Filters(kinds=(kind,))) for kind in ("abstract", "window", "passage")}
    typer.echo(
        "catalog: "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + f"; index points {sum(kinds.values())} ({kinds['abstract']} abstracts, {kinds['window']} windows, "
        + f"{kinds['passage']} passages)"
    )


@ingest_app.command("pdfs")
def ingest_pdfs(
    paths: list[Path] = typer.Argument(
        None, help="PDF files, or folders of them, named <arXiv id>.pdf; none: download from arxiv.org."
    ),
    limit: int = typer.Option(None, min=1, help="Download at most this many PDFs (newest papers first)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Try again PDFs that failed before."),
    timeout: float = typer.Option(60.0, help="Seconds one PDF may take to parse before its worker is stopped."),
    memory_mb: int = typer.Option(1024, help="Memory limit of the PDF worker process, in MB."),
) -> None:
    """Index full text (page-numbered passages) and reference lists (citation edges) of papers' PDFs."""
    from ingest.pdf_worker import PdfLimits
    from ingest.pdfs import download_pdfs, ingest_pdf_files, pdf_files
    from ingest.report import Summary

    settings = load_settings()
    limits = PdfLimits(memory_mb=memory_mb, seconds=timeout, max_bytes=settings.sources.pdf_max_bytes)
    if not paths:

        def run(client, summary, progress):
            download_pdfs(settings.catalog(), index, settings.embedder(), client, summary, progress, limits=limits,
                          limit=limit, retry_failed=retry_failed)  # fmt: skip

        index = open_index(settings)
        harvest(settings, run, "PDFs", index_after=False)
        return
    missing = [p for p in paths if not p.exists()]
    if missing:
        fail(f"no such file or folder: {missing[0]}")
    summary = Summary()
    with closing(settings):
        index = open_index(settings)
        with progress() as bars:
            ingest_pdf_files(settings.catalog(), index, settings.embedder(), pdf_files(paths), summary, bars,
                             limits=limits)  # fmt: skip
        report(settings, summary, f"PDFs: {summary.line()}", "files")


def analyser(settings, retrier=None):
    """The `ask` function of the analysis step, or None in retrieval-only mode (`retrier`: the LLM client's own
    policy when None)."""
    config = settings.llm_config()
    if config is None:
        return None
    from dataclasses import replace

    from assistant.llm import complete

    config = replace(config, max_tokens=max(config.max_tokens, 600))
    return lambda messages: complete(config, messages, json_object=True, retrier=retrier)


@ingest_app.command("analyse")
def ingest_analyse(
    limit: int = typer.Option(None, min=1, help="Analyse at most this many papers (newest first)."),
    refresh: bool = typer.Option(False, "--refresh", help="Analyse papers already analysed, again."),
) -> None:
    """Fill each paper's summary, topics, type, field, novelty and significance with the configured LLM."""
    from assistant.llm import LLMError
    from ingest.analyse import analyse_papers
    from ingest.report import Summary

    summary = Summary()
    with closing(load_settings()) as settings:
        ask = analyser(settings)
        if ask is None:
            fail("no LLM is configured: set SCHOLARLOOM_LLM (e.g. openai/gpt-4o-mini or ollama_chat/qwen2.5)")
        with progress() as bars:
            analyse_papers(settings.catalog(), ask, summary, bars, limit, refresh, unavailable=LLMError)
        report(settings, summary, f"analysis: {summary.line()}", "papers")


def _update_steps(settings, index, summary, oai_set: str, since, openalex: bool, s2: bool, pdfs: int, analyse: bool):
    """(name, step) pairs of `ingest update`, in order; each step takes the HTTP client and the progress bars."""
    from assistant.llm import LLMError
    from ingest.analyse import analyse_papers
    from ingest.harvest.arxiv import harvest_oai
    from ingest.harvest.openalex import OpenAlex, enrich_entities
    from ingest.harvest.openalex import enrich_papers as openalex_enrich
    from ingest.harvest.s2 import SemanticScholar
    from ingest.harvest.s2 import enrich_papers as s2_enrich
    from ingest.pdf_worker import PdfLimits
    from ingest.pdfs import download_pdfs

    src, catalog = settings.sources, settings.catalog()
    openalex_key = src.openalex_api_key.get_secret_value() if src.openalex_api_key else None
    s2_key = src.s2_api_key.get_secret_value() if src.s2_api_key else None
    window = {"set_spec": oai_set, "since": since}
    steps = [("arXiv OAI-PMH", lambda c, p: harvest_oai(catalog, c, src.arxiv_oai_url, summary, p, **window))]
    if openalex:
        api = lambda c: OpenAlex(c, src.openalex_url, src.contact_email, openalex_key)  # noqa: E731
        steps.append(("OpenAlex", lambda c, p: openalex_enrich(catalog, api(c), summary, p)))
        steps.append(("OpenAlex entities", lambda c, p: enrich_entities(catalog, api(c), summary, p)))
    if s2:
        steps.append(
            ("Semantic Scholar", lambda c, p: s2_enrich(catalog, SemanticScholar(c, src.s2_url, s2_key), summary, p))
        )
    steps.append(("index", lambda c, p: index_changes(settings, index, summary, p)))
    if pdfs:
        limits = PdfLimits(max_bytes=src.pdf_max_bytes)
        embedder = settings.embedder()
        steps.append(
            ("PDFs", lambda c, p: download_pdfs(catalog, index, embedder, c, summary, p, limits=limits, limit=pdfs))
        )
    ask = analyser(settings) if analyse else None
    if ask is not None:
        steps.append(("analysis", lambda c, p: analyse_papers(catalog, ask, summary, p, unavailable=LLMError)))
    return steps


@ingest_app.command("update")
def ingest_update(
    oai_set: str = typer.Option("cs", "--set", help="OAI-PMH set to follow, e.g. cs, math or physics:hep-th."),
    days: int = typer.Option(3, min=1, help="On the first run, how many days back to start."),
    openalex: bool = typer.Option(True, "--openalex/--no-openalex", help="Enrich new papers from OpenAlex."),
    s2: bool = typer.Option(False, "--s2/--no-s2", help="Enrich new papers from Semantic Scholar."),
    pdfs: int = typer.Option(0, min=0, help="Download and index at most this many new PDFs."),
    analyse: bool = typer.Option(True, "--analyse/--no-analyse", help="Analyse new papers when an LLM is set."),
) -> None:
    """The incremental run for cron: new arXiv records since the last harvest, enrichment, index, PDFs, analysis.

    Each step reports its own result; a failing step does not stop the ones after it.
    """
    from datetime import date, timedelta

    from assistant.llm import LLMError
    from ingest.harvest.arxiv import oai_last_name
    from ingest.http import FetchError
    from ingest.report import Summary

    summary = Summary()
    problems: list[str] = []
    with closing(load_settings()) as settings:
        index = open_index(settings)
        last = (settings.catalog().cursor(oai_last_name(oai_set)) or {}).get("datestamp")
        since = date.fromisoformat(last[:10]) if last else date.today() - timedelta(days=days)
        steps = _update_steps(settings, index, summary, oai_set, since, openalex, s2, pdfs, analyse)
        typer.echo(f"update: arXiv set {oai_set} from {since.isoformat()}")
        with settings.fetcher() as client, progress() as bars:
            for name, step in steps:
                try:
                    step(client, bars)
                except (FetchError, LLMError) as exc:
                    problems.append(f"{name}: {exc}")
        report(settings, summary, f"update: {summary.line()}", "records")
    if problems:
        fail("some steps did not finish (a rerun resumes them):\n  " + "\n  ".join(problems))
